import assert from "node:assert/strict";
import { isPlain } from "../util/plain_streams.ts";
import { WireClient } from "./wire_client.ts";
import { bodyChunks } from "./upstream_response.ts";
import { dec, enc, ok, post, rawUpstream, readPieces, sleep, soon } from "./testing/raw_upstream.ts";

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
      // Asked for as a stream: a PlainStream, which a reader takes without a throwing BYOB probe.
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

Deno.test("wire client: a streamed body read chunk by chunk ends and stays ended; a read pending at a cancel answers undefined", async () => {
  const up = rawUpstream(async (w) => {
    await w.write("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nfirst\r\n");
    await new Promise((r) => setTimeout(r, 20));
    if (w.n === 1) return w.write("6\r\nsecond\r\n0\r\n\r\n");
    // the second never sends more: its reader is left waiting, then cancels
  });
  const client = new WireClient();
  try {
    const whole = bodyChunks(await post(client, up.url))!;
    const parts: string[] = [];
    for (let c = await whole.next(); c !== undefined; c = await whole.next()) parts.push(dec.decode(c));
    assert.deepEqual(parts, ["first", "second"]);
    assert.equal(await whole.next(), undefined, "ended stays ended");
    assert.equal(await soon(() => client.idleCount, 1), 1, "the connection went back at the end");

    const cut = bodyChunks(await post(client, up.url))!;
    assert.equal(dec.decode(await cut.next()), "first");
    const pending = cut.next();
    await sleep(10);
    await cut.cancel();
    // The drain's deadline (200 ms) closes the socket under the pending read: it answers, not rejects.
    assert.equal(await pending, undefined);
    assert.equal(await cut.next(), undefined);
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
