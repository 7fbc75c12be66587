import assert from "node:assert/strict";
import { isConnectFailure } from "./retry.ts";
import { WireClient } from "./wire_client.ts";
import { UpstreamConnectError } from "./wire_connect.ts";
import { ok, post, rawUpstream } from "./testing/raw_upstream.ts";

Deno.test("wire client: a pooled connection the upstream closed meanwhile is replaced: the request is sent once more, on a new one", async () => {
  const up = rawUpstream(async (w) => {
    await w.write(ok(`{"n":${w.n}}`));
    if (w.n === 1) w.close(); // after the answer, without saying so: the next request finds it closed
  });
  const client = new WireClient();
  try {
    assert.deepEqual(JSON.parse(await (await post(client, up.url)).text()), { n: 1 });
    await new Promise((r) => setTimeout(r, 50)); // the close reaches us
    assert.deepEqual(JSON.parse(await (await post(client, up.url)).text()), { n: 2 });
    assert.equal(up.seen.accepts, 2);
    assert.deepEqual(up.seen.requests.map((r) => r.conn), [1, 2]);
  } finally {
    client.close();
    up.close();
  }
});

Deno.test("wire client: a fresh connection closed before the head, or a body cut short, fails (never a retry)", async () => {
  const up = rawUpstream(async (w) => {
    if (w.n === 1) return w.close();
    await w.write("HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n12345");
    w.close();
  });
  const client = new WireClient();
  try {
    await assert.rejects(post(client, up.url), /connection closed before the response head/);
    const res = await post(client, up.url);
    assert.equal(res.status, 200);
    await assert.rejects(res.text(), /closed before the end of the body/);
    assert.equal(up.seen.requests.length, 2);
    assert.equal(client.idleCount, 0);
  } finally {
    client.close();
    up.close();
  }
});

Deno.test("wire client: an abort before the head rejects with its reason and closes the connection; a cancelled body too", async () => {
  let release!: () => void;
  const held = new Promise<void>((r) => release = r);
  const up = rawUpstream(async (w) => {
    if (w.n === 1) return await held; // never answers the first
    await w.write("HTTP/1.1 200 OK\r\ncontent-length: 100000\r\n\r\n" + "x".repeat(1000));
  });
  const client = new WireClient();
  try {
    const ac = new AbortController();
    const call = post(client, up.url, "{}", ac.signal);
    await new Promise((r) => setTimeout(r, 30));
    const reason = new DOMException("upstream headers timeout", "TimeoutError");
    ac.abort(reason);
    await assert.rejects(call, (err) => err === reason);
    const res = await post(client, up.url);
    await res.body!.cancel();
    assert.equal(client.idleCount, 0, "neither connection is kept");
    const aborted = new AbortController();
    aborted.abort(new Error("gone"));
    await assert.rejects(post(client, up.url, "{}", aborted.signal), /gone/);
  } finally {
    release();
    client.close();
    up.close();
  }
});

Deno.test("wire client: a refused connection is a connect failure (retried by the retry rule)", async () => {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  const client = new WireClient();
  const err = await post(client, `http://127.0.0.1:${port}`).then(() => undefined, (e) => e);
  assert.ok(err instanceof UpstreamConnectError, String(err));
  assert.ok(isConnectFailure(err));
  client.close();
});

Deno.test("wire client: a header that would smuggle a line is refused before anything is sent", async () => {
  const up = rawUpstream((w) => w.write(ok("{}")));
  const client = new WireClient();
  try {
    const bad: Record<string, string>[] = [{ "x-a": "1\r\nx-b: 2" }, { "x-a\n": "1" }, { "x:a": "1" }];
    for (const headers of bad) {
      await assert.rejects(
        client.fetch(up.url, { method: "POST", headers, body: "{}", signal: new AbortController().signal }),
        TypeError,
      );
    }
    assert.equal(up.seen.accepts, 0);
  } finally {
    client.close();
    up.close();
  }
});

Deno.test("wire client: idle connections close after idleMs, and all of them on close()", async () => {
  const up = rawUpstream((w) => w.write(ok("{}")));
  const client = new WireClient({ idleMs: 100 });
  try {
    await Promise.all([1, 2, 3].map(async () => await (await post(client, up.url)).text()));
    assert.equal(client.idleCount, 3);
    await new Promise((r) => setTimeout(r, 250));
    assert.equal(client.idleCount, 0, "swept");
    await (await post(client, up.url)).text();
    assert.equal(up.seen.accepts, 4, "a new connection after the sweep");
    client.close();
    assert.equal(client.idleCount, 0);
  } finally {
    client.close();
    up.close();
  }
});

Deno.test("wire client: https with ALPN http/1.1, keep-alive over TLS", async () => {
  const dir = new URL("./testing/tls/", import.meta.url);
  const cert = await Deno.readTextFile(new URL("test_tls_cert.pem", dir));
  const key = await Deno.readTextFile(new URL("test_tls_key.pem", dir));
  const ca = await Deno.readTextFile(new URL("test_ca.pem", dir));
  const up = rawUpstream(
    (w) => w.write(ok(`{"tls":${w.n}}`)),
    () => Deno.listenTls({ hostname: "127.0.0.1", port: 0, cert, key, alpnProtocols: ["http/1.1"] }),
  );
  const client = new WireClient({ caCerts: [ca] });
  const url = `https://127.0.0.1:${up.port}`;
  try {
    assert.deepEqual(JSON.parse(await (await post(client, url)).text()), { tls: 1 });
    assert.deepEqual(JSON.parse(await (await post(client, url)).text()), { tls: 2 });
    assert.equal(up.seen.accepts, 1);
    assert.match(up.seen.requests[0]!.head, new RegExp(`\r\nhost: 127.0.0.1:${up.port}\r\n`));
    // Without the test's root the certificate is not trusted: a connect failure.
    const strict = new WireClient();
    const err = await post(strict, url).then(() => undefined, (e) => e);
    assert.ok(err instanceof UpstreamConnectError, String(err));
    strict.close();
  } finally {
    client.close();
    up.close();
  }
});
