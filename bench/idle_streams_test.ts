import assert from "node:assert/strict";
import { holdIdleStreams } from "./idle_streams.ts";

const enc = new TextEncoder();

/** A raw HTTP/1.1 server: reads a request head, then answers with `answer` (nothing when undefined) and keeps
 *  the connection; counts connections open and closed by the client. */
function server(answer?: string) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns: Deno.Conn[] = [];
  const state = { open: 0, closed: 0, requests: [] as string[] };
  const serve = async (conn: Deno.Conn) => {
    conns.push(conn);
    state.open++;
    const buf = new Uint8Array(4096);
    const n = await conn.read(buf);
    state.requests.push(new TextDecoder().decode(buf.subarray(0, n ?? 0)));
    if (answer !== undefined) await conn.write(enc.encode(answer));
    while ((await conn.read(buf).catch(() => null)) !== null) { /* the client keeps it open */ }
    state.open--;
    state.closed++;
  };
  (async () => {
    for await (const conn of listener) serve(conn);
  })().catch(() => {});
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}`,
    state,
    close() {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed */ }
      }
    },
  };
}

const until = async (ok: () => boolean) => {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
};

Deno.test("holdIdleStreams: every stream open at once while whileOpen runs, all closed after", async () => {
  const s = server("HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: {}\n\n");
  try {
    const r = await holdIdleStreams(
      {
        url: s.url,
        path: "/v1/x",
        headers: { authorization: "Bearer k" },
        body: "{}",
        n: 25,
        batch: 10,
        timeoutMs: 5000,
      },
      () => Promise.resolve(s.state.open),
    );
    assert.equal(r.opened, 25);
    assert.equal(r.errors, 0);
    assert.equal(r.value, 25);
    assert.equal(
      s.state.requests[0],
      `POST /v1/x HTTP/1.1\r\nhost: ${
        new URL(s.url).host
      }\r\nauthorization: Bearer k\r\ncontent-length: 2\r\n\r\n{}`,
    );
    await until(() => s.state.closed === 25);
    assert.equal(s.state.closed, 25);
  } finally {
    s.close();
  }
});

Deno.test("holdIdleStreams: a refused stream stops the ramp; a silent server times it out", async () => {
  const refusing = server("HTTP/1.1 429 Too Many Requests\r\ncontent-length: 2\r\n\r\n{}");
  const silent = server();
  try {
    const o = { path: "/", headers: {}, body: "{}", n: 30, batch: 10, timeoutMs: 300 };
    const r = await holdIdleStreams({ ...o, url: refusing.url }, () => Promise.resolve("ran"));
    assert.deepEqual([r.opened, r.errors, r.value], [0, 10, undefined]);
    assert.match(r.firstError!, /HTTP\/1\.1 429 Too Many Requests/);
    const t = await holdIdleStreams({ ...o, url: silent.url }, () => Promise.resolve("ran"));
    assert.deepEqual([t.opened, t.errors, t.value], [0, 10, undefined]);
    assert.match(t.firstError!, /not open within 300 ms/);
  } finally {
    refusing.close();
    silent.close();
  }
});
