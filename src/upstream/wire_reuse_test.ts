/**
 * The wire client's connection reuse against an upstream that writes what no request asked for: an answer reaches
 * only its own request (each request carries a nonce the upstream echoes), and a connection that received a byte
 * beyond an answer, or while idle, is never given to another request.
 */
import assert from "node:assert/strict";
import { WireClient } from "./wire_client.ts";
import { type Answer, dec, enc, ok, post, rawUpstream, sleep, soon } from "./testing/raw_upstream.ts";

/** The upstream's answer to `w`: its request's nonce echoed. */
const echo = (w: Answer, extra = "") => ok(JSON.stringify({ nonce: nonceOf(w) }), extra);
const nonceOf = (w: Answer) => (JSON.parse(w.body) as { nonce: string }).nonce;

/** A request with nonce `nonce`; resolves with the nonce its answer carries. */
async function ask(client: WireClient, url: string, nonce: string): Promise<string> {
  const res = await post(client, url, JSON.stringify({ nonce }));
  return (JSON.parse(await res.text()) as { nonce: string }).nonce;
}

Deno.test("wire reuse: a whole response written on an idle connection 100 ms after the answer never reaches the next request", async () => {
  const up = rawUpstream(async (w) => {
    await w.write(echo(w));
    if (w.n !== 1) return;
    await sleep(100);
    await w.write(echo(w)); // request 1's answer once more, unasked
  });
  const client = new WireClient();
  try {
    assert.equal(await ask(client, up.url, "key-a"), "key-a");
    await soon(() => client.idleCount, 0); // the stray answer came (the fixed client closes the connection)
    assert.equal(await ask(client, up.url, "key-b"), "key-b");
    assert.equal(up.seen.accepts, 2, "the connection that received the stray answer was not used again");
  } finally {
    client.close();
    up.close();
  }
});

Deno.test("wire reuse: bytes beyond the Content-Length (a whole response, 80 ms after the body) never reach the next request", async () => {
  const up = rawUpstream(async (w) => {
    if (w.n === 1) {
      // The excess is a whole response: request 1's answer once more.
      await w.write(echo(w));
      await sleep(80);
      return await w.write(echo(w));
    }
    if (w.n !== 3) return await w.write(echo(w));
    // A Content-Length counted in characters where the body has multibyte text: the body's tail and a whole
    // response come 80 ms later.
    const body = JSON.stringify({ nonce: nonceOf(w), text: "привет мир" });
    const wire = enc.encode(`HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
    const cut = wire.length - (enc.encode(body).length - body.length);
    await w.write(wire.subarray(0, cut));
    await sleep(80);
    await w.write(wire.subarray(cut));
    await w.write(echo(w));
  });
  const client = new WireClient();
  try {
    assert.equal(await ask(client, up.url, "key-a"), "key-a");
    await soon(() => client.idleCount, 0);
    assert.equal(await ask(client, up.url, "key-b"), "key-b");
    assert.equal(up.seen.accepts, 2);
    const third = await post(client, up.url, JSON.stringify({ nonce: "key-c" }));
    assert.match(await third.text(), /^\{"nonce":"key-c","text":"привет/);
    await soon(() => client.idleCount, 0);
    assert.equal(await ask(client, up.url, "key-d"), "key-d");
    assert.deepEqual(up.seen.requests.map((r) => r.conn), [1, 2, 2, 3]);
  } finally {
    client.close();
    up.close();
  }
});

Deno.test("wire reuse: the same after a chunked body read as a stream: the excess closes the idle connection", async () => {
  // Chunked: the body is read through the stream; the excess follows its last chunk 80 ms later.
  const up = rawUpstream(async (w) => {
    if (w.n !== 1) return await w.write(echo(w));
    const body = JSON.stringify({ nonce: nonceOf(w) });
    await w.write(
      `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${body.length.toString(16)}\r\n${body}\r\n`,
    );
    await sleep(20);
    await w.write("0\r\n\r\n");
    await sleep(80);
    await w.write(echo(w));
  });
  const client = new WireClient();
  try {
    assert.equal(await ask(client, up.url, "key-a"), "key-a");
    assert.equal(client.idleCount, 1);
    assert.equal(await soon(() => client.idleCount, 0), 0, "the excess closed the idle connection");
    assert.equal(await ask(client, up.url, "key-b"), "key-b");
    assert.equal(up.seen.accepts, 2);
  } finally {
    client.close();
    up.close();
  }
});

Deno.test("wire reuse: a byte or the upstream's half-close on a pooled connection closes it; the next request connects anew", async () => {
  const up = rawUpstream(async (w) => {
    await w.write(echo(w));
    await sleep(30);
    if (w.n === 1) await w.write("X");
    if (w.n === 2) w.closeWrite();
  });
  const client = new WireClient();
  try {
    assert.equal(await ask(client, up.url, "a"), "a");
    assert.equal(client.idleCount, 1);
    assert.equal(await soon(() => client.idleCount, 0), 0, "one byte while idle: closed");
    assert.equal(await ask(client, up.url, "b"), "b");
    assert.equal(up.seen.accepts, 2);
    assert.equal(await soon(() => client.idleCount, 0), 0, "end of stream while idle: closed");
    assert.equal(await ask(client, up.url, "c"), "c");
    assert.equal(up.seen.accepts, 3);
    // A connection nothing came on stays pooled and is reused.
    await sleep(60);
    assert.equal(client.idleCount, 1);
    assert.equal(await ask(client, up.url, "d"), "d");
    assert.equal(up.seen.accepts, 3);
  } finally {
    client.close();
    up.close();
  }
});

Deno.test("wire reuse: a late end of a cancelled body is drained; excess after it closes the connection, at once or later", async () => {
  const up = rawUpstream(async (w) => {
    if (w.k > 1 || w.n > 2) return await w.write(echo(w));
    await w.write("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nfirst\r\n");
    await sleep(20);
    if (w.n === 1) return await w.write("0\r\n\r\n" + echo(w)); // the end, and a stray answer in the same write
    await w.write("0\r\n\r\n"); // the end exactly: kept, then a stray answer 80 ms later
    await sleep(80);
    await w.write(echo(w));
  });
  const client = new WireClient();
  const cancelled = async (nonce: string) => {
    const res = await post(client, up.url, JSON.stringify({ nonce }));
    const reader = res.body!.getReader();
    assert.equal(dec.decode((await reader.read()).value), "first");
    await reader.cancel();
  };
  try {
    await cancelled("a");
    await sleep(100);
    assert.equal(client.idleCount, 0, "the drain read past the end: closed");
    await cancelled("b");
    assert.equal(await soon(() => client.idleCount, 1), 1, "drained to its end exactly: kept");
    assert.equal(await soon(() => client.idleCount, 0), 0, "then the stray answer came: closed");
    assert.equal(await ask(client, up.url, "c"), "c");
    assert.deepEqual(up.seen.requests.map((r) => r.conn), [1, 2, 3]);
  } finally {
    client.close();
    up.close();
  }
});

/**
 * An upstream that reads a request's head, then calls `onHead` before reading its body (a nonce in `x-nonce`):
 * what answers before the request is completely written looks like.
 */
function headFirstUpstream(
  onHead: (
    r: { nonce: string; k: number; conn: Deno.Conn; readBody: () => Promise<boolean> },
  ) => Promise<void>,
) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns = new Set<Deno.Conn>();
  let accepts = 0;
  const serve = async (conn: Deno.Conn) => {
    let pending = new Uint8Array(0);
    const buf = new Uint8Array(256 * 1024);
    const more = async () => {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) return false;
      const next = new Uint8Array(pending.length + n);
      next.set(pending);
      next.set(buf.subarray(0, n), pending.length);
      pending = next;
      return true;
    };
    for (let k = 1;; k++) {
      let end = -1;
      while ((end = dec.decode(pending.subarray(0, 8192)).indexOf("\r\n\r\n")) < 0) {
        if (!(await more())) return;
      }
      const head = dec.decode(pending.subarray(0, end));
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)![1]);
      const nonce = /\r\nx-nonce: ([^\r]*)/i.exec(head)![1]!;
      let left = end + 4 + length;
      let read = false;
      const readBody = async () => {
        read = true;
        // Counted, not kept: the bodies are large.
        while (pending.length < left) {
          left -= pending.length;
          pending = new Uint8Array(0);
          if (!(await more())) return false;
        }
        pending = pending.slice(left);
        return true;
      };
      await onHead({ nonce, k, conn, readBody }).catch(() => {});
      if (!read) return closeQuietly(conn); // the body was not read: no next request can be found
    }
  };
  (async () => {
    for await (const conn of listener) {
      accepts++;
      conns.add(conn);
      serve(conn).finally(() => conns.delete(conn));
    }
  })().catch(() => {});
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    accepts: () => accepts,
    close() {
      listener.close();
      for (const c of conns) closeQuietly(c);
    },
  };
}

function closeQuietly(conn: Deno.Conn) {
  try {
    conn.close();
  } catch { /* already */ }
}

const writeAll = async (conn: Deno.Conn, s: string) => {
  const b = enc.encode(s);
  for (let off = 0; off < b.length;) off += await conn.write(b.subarray(off));
};
/** Larger than loopback's socket buffers: its write waits until the upstream reads it. */
const BIG = new Uint8Array(16 * 1024 * 1024).fill(0x20);
const askBig = async (client: WireClient, url: string, nonce: string) => {
  const res = await client.fetch(url + "/v1/x", {
    method: "POST",
    headers: { "x-nonce": nonce },
    body: BIG,
    signal: new AbortController().signal,
  });
  return { status: res.status, nonce: res.headers.get("x-nonce"), text: await res.text() };
};
const answer = (nonce: string, status = "200 OK", extra = "") =>
  `HTTP/1.1 ${status}\r\nx-nonce: ${nonce}\r\n${extra}content-length: ${nonce.length}\r\n\r\n${nonce}`;

Deno.test("wire reuse: bytes that arrive on a reused connection before the request is written are no answer to it: sent again on a new one", async () => {
  let previous = "";
  const up = headFirstUpstream(async ({ nonce, k, conn, readBody }) => {
    // The second request on a connection: first an answer to the previous one, as the request is being written.
    if (k === 2) await writeAll(conn, answer(previous));
    await sleep(50);
    if (!(await readBody())) return;
    previous = nonce;
    await writeAll(conn, answer(nonce));
  });
  const client = new WireClient();
  try {
    assert.deepEqual(await askBig(client, up.url, "key-a"), { status: 200, nonce: "key-a", text: "key-a" });
    assert.deepEqual(await askBig(client, up.url, "key-b"), { status: 200, nonce: "key-b", text: "key-b" });
    assert.equal(up.accepts(), 2, "key-b was sent again on a new connection");
  } finally {
    client.close();
    up.close();
  }
});

Deno.test("wire reuse: on a new connection an early answer is the request's own (RFC 9112 §9.5): read, and never reused", async () => {
  const up = headFirstUpstream(async ({ nonce, conn, readBody }) => {
    if (nonce === "too-big") {
      // 413 before the body, then close (unread bytes: a reset) while the client is still writing.
      await writeAll(conn, answer(nonce, "413 Payload Too Large", "connection: close\r\n"));
      await sleep(50);
      conn.close();
      return;
    }
    if (nonce === "early") {
      // An answer before the body, keep-alive, then the body read and discarded.
      await writeAll(conn, answer(nonce));
      await readBody();
      return;
    }
    await readBody();
    await writeAll(conn, answer(nonce));
  });
  const client = new WireClient();
  try {
    assert.deepEqual(await askBig(client, up.url, "too-big"), {
      status: 413,
      nonce: "too-big",
      text: "too-big",
    });
    assert.equal(client.idleCount, 0);
    assert.deepEqual(await askBig(client, up.url, "early"), { status: 200, nonce: "early", text: "early" });
    assert.equal(client.idleCount, 0, "an answer that came before the request was written: not reused");
    assert.deepEqual(await askBig(client, up.url, "late"), { status: 200, nonce: "late", text: "late" });
    assert.equal(client.idleCount, 1);
    assert.equal(up.accepts(), 3);
  } finally {
    client.close();
    up.close();
  }
});

/** Answers that end their connection's use, as read by the client: `fails` when the call or its body fails. */
const ENDS_REUSE: {
  name: string;
  wire: (nonce: string) => string;
  fails?: true;
  close?: true;
  empty?: true;
}[] = [
  {
    name: "a 204 with a whole response after it in the same write",
    wire: (n) => "HTTP/1.1 204 No Content\r\n\r\n" + ok(JSON.stringify({ nonce: n })),
    empty: true,
  },
  {
    name: "chunked and a Content-Length (chunked is read)",
    wire: (n) =>
      `HTTP/1.1 200 OK\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n${chunk(n)}0\r\n\r\n`,
  },
  { name: "Connection: close", wire: (n) => ok(JSON.stringify({ nonce: n }), "connection: close\r\n") },
  {
    name: "HTTP/1.0 without keep-alive",
    wire: (n) => ok(JSON.stringify({ nonce: n })).replace("1.1", "1.0"),
  },
  {
    name: "no length on keep-alive (read to the end of the connection)",
    wire: (n) => `HTTP/1.1 200 OK\r\nconnection: keep-alive\r\n\r\n${JSON.stringify({ nonce: n })}`,
    close: true,
  },
  {
    name: "excess bytes in the same write",
    wire: (n) => ok(JSON.stringify({ nonce: n })) + "HTTP/1.1 200 OK\r\n",
  },
  {
    name: "two different Content-Lengths",
    wire: (n) => `HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 20\r\n\r\n{"nonce":"${n}"}`,
    fails: true,
  },
  {
    name: "a 21-digit chunk size",
    wire: () => `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${"1".repeat(21)}\r\n`,
    fails: true,
  },
  {
    name: "a 16-digit Content-Length",
    wire: () => `HTTP/1.1 200 OK\r\ncontent-length: ${"9".repeat(16)}\r\n\r\n`,
    fails: true,
  },
  {
    name: "chunked applied twice",
    wire: (n) =>
      `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ntransfer-encoding: chunked\r\n\r\n${
        chunk(n)
      }0\r\n\r\n`,
    fails: true,
  },
  {
    name: "whitespace before a colon",
    wire: (n) => `HTTP/1.1 200 OK\r\ncontent-length : 2\r\n\r\n{"nonce":"${n}"}`,
    fails: true,
  },
  {
    name: "101 Switching Protocols",
    wire: () => "HTTP/1.1 101 Switching Protocols\r\nupgrade: x\r\n\r\n",
    fails: true,
  },
  {
    name: "17 interim heads",
    wire: (n) => "HTTP/1.1 100 Continue\r\n\r\n".repeat(17) + ok(JSON.stringify({ nonce: n })),
    fails: true,
  },
  {
    name: "HTTP/1.0 with Transfer-Encoding",
    wire: (n) => `HTTP/1.0 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${chunk(n)}0\r\n\r\n`,
    fails: true,
  },
  {
    name: "a status under 100",
    wire: (n) => ok(JSON.stringify({ nonce: n })).replace("200", "099"),
    fails: true,
  },
];
const chunk = (nonce: string) => {
  const body = JSON.stringify({ nonce });
  return `${enc.encode(body).length.toString(16)}\r\n${body}\r\n`;
};

Deno.test("wire reuse: every answer that is not framed exactly ends its connection's use (RFC 9112 §6, §9.6)", async () => {
  // Odd requests get a case, even ones a plain answer: each even one must come on a new connection.
  const up = rawUpstream(async (w) => {
    if (w.n % 2 === 0) return await w.write(echo(w));
    const c = ENDS_REUSE[(w.n - 1) / 2]!;
    await w.write(c.wire(nonceOf(w)));
    if (c.close) w.close();
  });
  const client = new WireClient();
  try {
    for (const [i, c] of ENDS_REUSE.entries()) {
      if (c.empty) {
        const res = await post(client, up.url, JSON.stringify({ nonce: `case-${i}` }));
        assert.deepEqual([res.status, await res.text()], [204, ""], c.name);
      } else {
        const first = ask(client, up.url, `case-${i}`);
        if (c.fails) await assert.rejects(first, /^UpstreamProtocolFailure: upstream HTTP\/1.1: /, c.name);
        else assert.equal(await first, `case-${i}`, c.name);
      }
      assert.equal(client.idleCount, 0, c.name);
      assert.equal(await ask(client, up.url, `next-${i}`), `next-${i}`, c.name);
      const [a, b] = up.seen.requests.slice(2 * i);
      assert.notEqual(a!.conn, b!.conn, `${c.name}: the next request on a new connection`);
    }
    // The plain answers' connections were reused by the next case each time.
    assert.equal(up.seen.accepts, ENDS_REUSE.length + 1);
  } finally {
    client.close();
    up.close();
  }
});

Deno.test("wire reuse: up to 16 interim heads (103, 100) are read past and the connection is reused", async () => {
  const up = rawUpstream((w) =>
    w.write(
      "HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n" + "HTTP/1.1 100 Continue\r\n\r\n".repeat(15) + echo(w),
    )
  );
  const client = new WireClient();
  try {
    assert.equal(await ask(client, up.url, "a"), "a");
    assert.equal(await ask(client, up.url, "b"), "b");
    assert.equal(up.seen.accepts, 1);
  } finally {
    client.close();
    up.close();
  }
});

Deno.test("wire reuse: a request that says Connection: close leaves its connection closed; HEAD is never sent", async () => {
  const up = rawUpstream((w) => w.write(echo(w)));
  const client = new WireClient();
  const send = (nonce: string, headers: Record<string, string>, method = "POST") =>
    client.fetch(up.url + "/v1/x", {
      method,
      headers,
      body: JSON.stringify({ nonce }),
      signal: new AbortController().signal,
    });
  try {
    assert.equal(await (await send("a", { Connection: "keep-alive, Close" })).text(), '{"nonce":"a"}');
    assert.equal(client.idleCount, 0);
    assert.equal(await (await send("b", {})).text(), '{"nonce":"b"}');
    assert.equal(client.idleCount, 1);
    await assert.rejects(send("c", {}, "HEAD"), TypeError);
    assert.deepEqual(up.seen.requests.map((r) => r.conn), [1, 2]);
  } finally {
    client.close();
    up.close();
  }
});
