import assert from "node:assert/strict";
import { upstreamHttp, withConnectFallback } from "./http_client.ts";
import { UpstreamConnectError } from "./wire_connect.ts";

const none = () => undefined;

Deno.test("upstream http: the wire client by default; fetch when chosen or when a proxy is configured", () => {
  assert.equal(upstreamHttp("wire", none).kind, "wire");
  assert.equal(upstreamHttp("fetch", none).kind, "fetch");
  for (const name of ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"]) {
    assert.equal(
      upstreamHttp("wire", (n) => n === name ? "http://proxy:3128" : undefined).kind,
      "fetch",
      name,
    );
  }
  assert.equal(
    upstreamHttp("wire", (n) => n === "HTTPS_PROXY" ? "" : undefined).kind,
    "wire",
    "empty is unset",
  );
});

Deno.test("upstream http: both clients send the same request and read the same answer", async () => {
  const seen: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    seen.push(
      `${req.method} ${new URL(req.url).pathname} ${req.headers.get("authorization")} ${await req.text()}`,
    );
    return Response.json({ ok: true }, { headers: { "retry-after": "7" } });
  });
  const url = `http://127.0.0.1:${server.addr.port}/v1/messages`;
  try {
    for (const kind of ["wire", "fetch"] as const) {
      const http = upstreamHttp(kind, none);
      const res = await http.fetch(url, {
        method: "POST",
        headers: { authorization: "Bearer k", "content-type": "application/json" },
        body: new TextEncoder().encode('{"a":1}'),
        signal: new AbortController().signal,
      });
      assert.equal(res.status, 200, kind);
      assert.equal(res.headers.get("retry-after"), "7", kind);
      assert.deepEqual(JSON.parse(await res.text()), { ok: true }, kind);
      http.close();
    }
    assert.deepEqual(seen, [`POST /v1/messages Bearer k {"a":1}`, `POST /v1/messages Bearer k {"a":1}`]);
  } finally {
    await server.shutdown();
  }
});

Deno.test("upstream http: a connect failure to a host name is tried once through fetch; an IP literal, an abort or another failure is not", async () => {
  const calls: string[] = [];
  const answer = new Response("ok");
  const wire = (fail: Error) => (url: string) => (calls.push(`wire ${url}`), Promise.reject(fail));
  const fallback = (url: string) => (calls.push(`fetch ${url}`), Promise.resolve(answer));
  const init = { method: "POST", headers: {}, body: "{}", signal: new AbortController().signal };
  const refused = new UpstreamConnectError("refused");

  assert.equal(
    await withConnectFallback(wire(refused), fallback)("https://api.example.com/v1", init),
    answer,
  );
  assert.deepEqual(calls.splice(0), ["wire https://api.example.com/v1", "fetch https://api.example.com/v1"]);

  for (const url of ["http://127.0.0.1:9/v1", "http://[::1]:9/v1"]) {
    await assert.rejects(withConnectFallback(wire(refused), fallback)(url, init), (e) => e === refused);
    assert.deepEqual(calls.splice(0), [`wire ${url}`], url);
  }
  const other = new TypeError("protocol");
  await assert.rejects(
    withConnectFallback(wire(other), fallback)("https://api.example.com/v1", init),
    TypeError,
  );
  const aborted = new AbortController();
  aborted.abort();
  await assert.rejects(
    withConnectFallback(wire(refused), fallback)("https://api.example.com/v1", {
      ...init,
      signal: aborted.signal,
    }),
    (e) => e === refused,
  );
  assert.deepEqual(calls.splice(0), ["wire https://api.example.com/v1", "wire https://api.example.com/v1"]);
});
