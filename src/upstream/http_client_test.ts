import assert from "node:assert/strict";
import { upstreamHttp } from "./http_client.ts";

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
      assert.deepEqual(await res.json(), { ok: true }, kind);
      http.close();
    }
    assert.deepEqual(seen, [`POST /v1/messages Bearer k {"a":1}`, `POST /v1/messages Bearer k {"a":1}`]);
  } finally {
    await server.shutdown();
  }
});
