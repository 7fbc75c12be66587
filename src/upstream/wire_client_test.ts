import assert from "node:assert/strict";
import { isPlain } from "../util/plain_streams.ts";
import { isConnectFailure } from "./retry.ts";
import type { UpstreamResponse } from "./upstream_response.ts";
import { UpstreamConnectError, WireClient } from "./wire_client.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

interface Seen {
  /** Connections accepted. */
  accepts: number;
  /** Each request's head and body, as received. */
  requests: { head: string; body: string; conn: number }[];
}

/**
 * A raw HTTP/1.1 upstream on loopback: reads each request (head and Content-Length body) and hands it to
 * `answer`, which writes whatever bytes the test wants (or closes, or never answers).
 */
function rawUpstream(
  answer: (w: { write(s: string | Uint8Array): Promise<void>; close(): void; n: number }) => Promise<void>,
  listen: () => Deno.Listener = () => Deno.listen({ hostname: "127.0.0.1", port: 0 }),
) {
  const listener = listen();
  const seen: Seen = { accepts: 0, requests: [] };
  const conns = new Set<Deno.Conn>();
  const serve = async (conn: Deno.Conn, id: number) => {
    let pending = new Uint8Array(0);
    const more = async () => {
      const buf = new Uint8Array(64 * 1024);
      const n = await conn.read(buf).catch(() => null);
      if (n === null) return false;
      const next = new Uint8Array(pending.length + n);
      next.set(pending);
      next.set(buf.subarray(0, n), pending.length);
      pending = next;
      return true;
    };
    for (;;) {
      let end = -1;
      while ((end = dec.decode(pending).indexOf("\r\n\r\n")) < 0) {
        if (!(await more())) return conns.delete(conn);
      }
      const head = dec.decode(pending).slice(0, end);
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
      const headBytes = enc.encode(head).length + 4;
      while (pending.length < headBytes + length) if (!(await more())) return conns.delete(conn);
      const body = dec.decode(pending.subarray(headBytes, headBytes + length));
      pending = pending.slice(headBytes + length);
      seen.requests.push({ head, body, conn: id });
      let closed = false;
      await answer({
        write: async (s) => {
          const b = typeof s === "string" ? enc.encode(s) : s;
          for (let off = 0; off < b.length;) off += await conn.write(b.subarray(off));
        },
        close: () => {
          closed = true;
          try {
            conn.close();
          } catch { /* gone */ }
        },
        n: seen.requests.length,
      }).catch(() => {});
      if (closed) return conns.delete(conn);
    }
  };
  (async () => {
    for await (const conn of listener) {
      conns.add(conn);
      serve(conn, ++seen.accepts);
    }
  })().catch(() => {});
  const addr = listener.addr as Deno.NetAddr;
  return {
    url: `http://127.0.0.1:${addr.port}`,
    port: addr.port,
    seen,
    close() {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch { /* gone */ }
      }
    },
  };
}

const post = (client: WireClient, url: string, body = "{}", signal = new AbortController().signal) =>
  client.fetch(url + "/v1/chat/completions?x=1", {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer up-key" },
    body,
    signal,
  });

/** A body read to its end: its text, and the size of each piece the stream handed over. */
async function readPieces(res: UpstreamResponse): Promise<{ text: string; sizes: number[] }> {
  const reader = res.body!.getReader();
  let text = "";
  const sizes: number[] = [];
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    text += dec.decode(r.value, { stream: true });
    sizes.push(r.value.length);
  }
  return { text: text + dec.decode(), sizes };
}

const ok = (body: string, extra = "") =>
  `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n${extra}content-length: ${
    enc.encode(body).length
  }\r\n\r\n${body}`;

Deno.test("wire client: the request as written (target, Host, length, headers, body); answers reuse one connection", async () => {
  const up = rawUpstream((w) => w.write(ok(`{"n":${w.n}}`, "x-request-id: r1\r\n")));
  const client = new WireClient();
  try {
    for (let i = 1; i <= 3; i++) {
      const res = await post(client, up.url, `{"привет":${i}}`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("x-request-id"), "r1");
      assert.deepEqual(JSON.parse(await res.text()), { n: i });
    }
    assert.equal(up.seen.accepts, 1, "one connection for three requests");
    const [first] = up.seen.requests;
    const lines = first!.head.split("\r\n");
    assert.equal(lines[0], "POST /v1/chat/completions?x=1 HTTP/1.1");
    assert.deepEqual(lines.slice(1), [
      `host: 127.0.0.1:${up.port}`,
      `user-agent: Deno/${Deno.version.deno}`,
      "accept: */*",
      `content-length: ${enc.encode('{"привет":1}').length}`,
      "content-type: application/json",
      "authorization: Bearer up-key",
    ]);
    assert.equal(first!.body, '{"привет":1}');
    assert.equal(client.idleCount, 1);
  } finally {
    client.close();
    up.close();
  }
});

Deno.test("wire client: a body that came whole with its head frees the connection at once; bytes beyond it close it", async () => {
  const up = rawUpstream((w) => w.write(ok(`{"n":${w.n}}`) + (w.n === 3 ? "HTTP/1.1 200 OK\r\n" : "")));
  const client = new WireClient();
  try {
    const first = await post(client, up.url);
    // Back in the pool before its body is read: the second request goes on the same connection meanwhile.
    assert.equal(client.idleCount, 1);
    const second = await post(client, up.url);
    assert.equal(up.seen.accepts, 1);
    assert.deepEqual(JSON.parse(await second.text()), { n: 2 });
    assert.deepEqual(JSON.parse(await first.text()), { n: 1 });
    // An answer followed by bytes of no request: the connection is not given again.
    const third = await post(client, up.url);
    assert.deepEqual(JSON.parse(await third.text()), { n: 3 });
    assert.equal(client.idleCount, 0);
    assert.deepEqual(JSON.parse(await (await post(client, up.url)).text()), { n: 4 });
    assert.equal(up.seen.accepts, 2);
  } finally {
    client.close();
    up.close();
  }
});

Deno.test("wire client: a head dribbled byte by byte, bigger than the read buffer, after a 100 Continue; a chunked body", async () => {
  const big = "x-filler: " + "a".repeat(6000) + "\r\n";
  const wire = "HTTP/1.1 100 Continue\r\n\r\n" +
    `HTTP/1.1 201 Created\r\n${big}transfer-encoding: chunked\r\n\r\n` +
    "3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\ntrailer: t\r\n\r\n";
  const up = rawUpstream(async (w) => {
    const b = enc.encode(wire);
    // Byte by byte through the head, then the body in two pieces.
    const headLen = wire.indexOf("3\r\nabc");
    for (let i = 0; i < headLen; i += 97) await w.write(b.subarray(i, Math.min(headLen, i + 97)));
    await w.write(b.subarray(headLen, headLen + 5));
    await w.write(b.subarray(headLen + 5));
  });
  const client = new WireClient();
  try {
    for (let i = 0; i < 2; i++) {
      const res = await post(client, up.url);
      assert.equal(res.status, 201);
      assert.equal(res.statusText, "Created");
      assert.equal(res.headers.get("x-filler")?.length, 6000);
      assert.equal(await res.text(), "abcde");
    }
    assert.equal(up.seen.accepts, 1, "a chunked answer read to its end leaves the connection reusable");
  } finally {
    client.close();
    up.close();
  }
});

Deno.test("wire client: a Content-Length body that arrives in pieces streams to its end; the connection is reused", async () => {
  const body = "y".repeat(40_000);
  const up = rawUpstream(async (w) => {
    const b = enc.encode(ok(body));
    await w.write(b.subarray(0, 3000));
    await new Promise((r) => setTimeout(r, 20));
    await w.write(b.subarray(3000));
  });
  const client = new WireClient();
  try {
    for (let i = 0; i < 2; i++) {
      const res = await post(client, up.url);
      // A PlainStream: the SSE reader takes it with the default reader, without a throwing BYOB probe.
      assert.equal(isPlain(res.body!), true);
      const { text, sizes } = await readPieces(res);
      assert.equal(text, body);
      assert.ok(sizes.length > 1, `read in ${sizes.length} pieces`);
    }
    assert.equal(up.seen.accepts, 1);
  } finally {
    client.close();
    up.close();
  }
});

Deno.test("wire client: a body already there in bulk comes in reads that grow to 16 KiB; a small answer follows", async () => {
  const big = "z".repeat(60_000);
  const up = rawUpstream(async (w) => {
    // The first answer whole in one write; the second is small.
    await w.write(ok(w.n === 1 ? big : "{}"));
  });
  const client = new WireClient();
  try {
    // Let the upstream's one write land whole before the client reads.
    const res = await post(client, up.url);
    await new Promise((r) => setTimeout(r, 50));
    const { text, sizes } = await readPieces(res);
    assert.equal(text, big);
    // A fixed 2 KiB buffer takes 30 reads; doubling up to 16 KiB takes 6.
    assert.ok(sizes.length <= 7, `${sizes.length} reads: ${sizes.join(", ")}`);
    assert.equal(Math.max(...sizes), 16 * 1024);
    const small = await post(client, up.url);
    assert.equal(await small.text(), "{}");
    assert.equal(up.seen.accepts, 1);
  } finally {
    client.close();
    up.close();
  }
});

Deno.test("wire client: a body cancelled before its end is read on briefly; the connection is kept only if it ends cleanly", async () => {
  // The stream pipeline stops reading at the answer's terminal frame; chunked coding's "0" chunk comes after it.
  const up = rawUpstream(async (w) => {
    await w.write("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nfirst\r\n");
    await new Promise((r) => setTimeout(r, 20));
    if (w.n === 1) return w.write("0\r\n\r\n"); // its end, a little later
    if (w.n === 2) return w.write(`1400\r\n${"x".repeat(0x1400)}\r\n0\r\n\r\n`); // more than the drain takes
    // the third never ends: the drain's time runs out
  });
  const client = new WireClient();
  const firstChunk = async () => {
    const res = await post(client, up.url);
    const reader = res.body!.getReader();
    assert.equal(dec.decode((await reader.read()).value), "first");
    await reader.cancel();
  };
  const idleSoon = async (n: number) => {
    for (let i = 0; i < 50 && client.idleCount !== n; i++) await new Promise((r) => setTimeout(r, 10));
    return client.idleCount;
  };
  try {
    await firstChunk();
    assert.equal(await idleSoon(1), 1, "its end came within the drain: kept");
    await firstChunk();
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(client.idleCount, 0, "over the drain's bytes: closed");
    await firstChunk();
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(client.idleCount, 0, "no end within the drain's time: closed");
    assert.deepEqual(up.seen.requests.map((r) => r.conn), [1, 1, 2]);
  } finally {
    client.close();
    up.close();
  }
});

Deno.test("wire client: Connection: close and a body to the end of the connection are not reused", async () => {
  const up = rawUpstream(async (w) => {
    if (w.n === 1) return w.write(ok("{}", "connection: close\r\n"));
    await w.write("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: 1\n\n");
    await w.write("data: 2\n\n");
    w.close();
  });
  const client = new WireClient();
  try {
    assert.equal(await (await post(client, up.url)).text(), "{}");
    assert.equal(await (await post(client, up.url)).text(), "data: 1\n\ndata: 2\n\n");
    assert.equal(up.seen.accepts, 2);
    assert.equal(client.idleCount, 0);
  } finally {
    client.close();
    up.close();
  }
});

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
  const dir = new URL("./__fixtures__/", import.meta.url);
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
