import assert from "node:assert/strict";
import { Http1Failure } from "./failure.ts";
import { bufferedConn, fill, readAhead } from "./reader.ts";

/** A loopback connection whose other end writes `parts` (one write each, awaited in turn) and then closes. */
async function serving(parts: Uint8Array[]): Promise<{ conn: Deno.TcpConn; done: Promise<void> }> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepted = listener.accept();
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: listener.addr.port });
  const server = await accepted;
  listener.close();
  const done = (async () => {
    for (const p of parts) {
      for (let off = 0; off < p.length;) off += await server.write(p.subarray(off));
      await new Promise((r) => setTimeout(r, 5));
    }
    server.close();
  })();
  return { conn, done };
}

const bytes = (n: number, fillWith = 0x61) => new Uint8Array(n).fill(fillWith);

Deno.test("http1 reader: bytes not yet used stay buffered; the buffer grows to the bound and no further", async () => {
  const { conn, done } = await serving([bytes(3000), bytes(3000)]);
  const r = bufferedConn(conn);
  let total = 0;
  while (total < 6000) {
    const n = await fill(r, 8192);
    assert.notEqual(n, null);
    total += n!;
  }
  // Nothing was used: all 6000 bytes are still there, in one buffer no larger than the bound.
  assert.equal(r.end - r.start, 6000);
  assert.ok(r.buf.length <= 8192, `${r.buf.length}`);
  r.start = r.end - 10; // used all but 10: they stay for the next reader; the stream has ended
  assert.equal(await fill(r, 8192), null);
  assert.equal(r.end - r.start, 10);
  // A buffer full at the bound fails the read: a line (a head, a chunk size) past every bound is refused.
  r.start = 0;
  r.end = r.buf.length;
  await assert.rejects(fill(r, r.buf.length), Http1Failure);
  conn.close();
  await done;
});

Deno.test("http1 reader: a read issued ahead is the next fill's read; its arrival is signalled once", async () => {
  const { conn, done } = await serving([bytes(5)]);
  const r = bufferedConn(conn);
  let arrivals = 0;
  r.onArrival = () => arrivals++;
  readAhead(r);
  assert.equal(r.arrived, false);
  assert.equal(await fill(r, 1024), 5);
  assert.deepEqual([r.arrived, arrivals, r.ahead, r.end - r.start], [true, 1, undefined, 5]);
  r.start = r.end;
  readAhead(r);
  assert.equal(await fill(r, 1024), null); // the end of the stream, through the read ahead
  assert.equal(arrivals, 2);
  conn.close();
  await done;
});
