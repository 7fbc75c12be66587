/**
 * One bounded buffered reader over a connection (Deno.TcpConn or TlsConn): the connection with its read
 * buffer, read one read at a time (`fill`) into a buffer that grows only up to the caller's bound. What a read
 * brought past the part in use stays buffered between `start` and `end` for the next reader of it: the head
 * parser (head.ts), the chunked decoder (chunked.ts), a body read by length or to the connection's end.
 * Used by the upstream client (src/upstream/wire_client.ts, its pool and body stream) and the page fetch
 * (src/web/page_reader.ts).
 *
 * A connection's next read may be issued ahead of need (`readAhead`): Deno cannot cancel a read without closing
 * the connection, so the upstream client issues it when a connection goes idle in its pool and watches it
 * (whatever settles it — a byte, end of stream, an error — means the connection is not to be reused), and
 * before a request is written on a new connection. It costs nothing per request: it is the read the next
 * answer's head needs anyway, and the first `fill` takes its result.
 */
import { Http1Failure } from "./failure.ts";

export type Conn = Deno.TcpConn | Deno.TlsConn;

/** A connection with its read buffer: the bytes in `buf[start, end)` are read and not yet used. */
export interface BufferedConn {
  conn: Conn;
  buf: Uint8Array;
  start: number;
  end: number;
  /** The buffer's size for the next read that starts with it empty (fill). */
  want: number;
  /** The read issued ahead of need (readAhead) into `buf` after `end`; the next `fill` takes its result. While
   *  it is pending nothing may move or replace `buf`. */
  ahead: Promise<number | null | ReadFailed> | undefined;
  /** The read ahead has settled: bytes, end of stream or an error came. */
  arrived: boolean;
  /** Called when the read ahead settles, if set then (the upstream pool's idle watch). */
  onArrival: (() => void) | undefined;
}

/** A read ahead that failed: kept as a value (nobody may be waiting for it) and thrown by the `fill` that takes it. */
class ReadFailed {
  constructor(readonly error: unknown) {}
}

const MIN_BUFFER = 2048;
/** The largest buffer a read grows to by itself; a caller's bound may let a long line grow it further. */
export const MAX_BUFFER = 16 * 1024;

export function bufferedConn(conn: Conn): BufferedConn {
  return {
    conn,
    buf: new Uint8Array(MIN_BUFFER),
    start: 0,
    end: 0,
    want: MIN_BUFFER,
    ahead: undefined,
    arrived: false,
    onArrival: undefined,
  };
}

/**
 * Issues the next read of a connection whose buffer holds nothing (a new one, or one whose answer ended
 * exactly), into its buffer sized as `fill` sizes it. Its result waits in `r.ahead` for the next `fill`;
 * when it settles `r.arrived` is set and `r.onArrival`, if set then, is called.
 */
export function readAhead(r: BufferedConn): void {
  if (r.buf.length !== r.want) r.buf = new Uint8Array(r.want);
  r.start = r.end = 0;
  r.arrived = false;
  const settled = (n: number | null | ReadFailed) => {
    r.arrived = true;
    r.onArrival?.();
    return n;
  };
  r.ahead = r.conn.read(r.buf.subarray(r.end)).then(
    settled,
    (err) => settled(new ReadFailed(err)),
  );
}

/**
 * Reads once into the buffer after `end`, growing it (up to `max`; full at `max`: Http1Failure) when full; null
 * at end of stream. An empty buffer is first sized by the last read: one that filled all the room doubles it
 * (up to MAX_BUFFER: more was waiting, so a burst — a fast upstream's whole stream — comes in a few reads, each
 * one pipeline step), one that brought under a quarter of it brings it back to MIN_BUFFER (what an idle stream
 * holds). A read issued ahead (readAhead) is this read: its result is taken instead of reading again. A read
 * error rejects as the connection's read rejected.
 */
export function fill(r: BufferedConn, max: number): Promise<number | null> {
  return r.ahead ? takeAhead(r) : readMore(r, max);
}

/**
 * `then`, not an async function: a suspended one is an object of its own, held by every idle stream's pending
 * read (docs/performance.md, "Idle streams: what one holds"). A failure before the read rejects, as it would.
 */
function readMore(r: BufferedConn, max: number): Promise<number | null> {
  if (r.start === r.end && r.buf.length !== r.want) {
    r.buf = new Uint8Array(r.want);
    r.start = r.end = 0;
  }
  if (r.start > 0 && r.end === r.buf.length) {
    r.buf.copyWithin(0, r.start, r.end);
    r.end -= r.start;
    r.start = 0;
  }
  if (r.end === r.buf.length) {
    if (r.buf.length >= max) return Promise.reject(new Http1Failure("response line too long"));
    const grown = new Uint8Array(Math.min(max, r.buf.length * 2));
    grown.set(r.buf.subarray(0, r.end));
    r.buf = grown;
  }
  const room = r.buf.length - r.end;
  let reading: Promise<number | null>;
  try {
    reading = r.conn.read(r.buf.subarray(r.end));
  } catch (err) {
    return Promise.reject(err);
  }
  return reading.then((n) => {
    if (n !== null) {
      r.end += n;
      const size = r.buf.length;
      r.want = n === room ? Math.min(MAX_BUFFER, 2 * size) : 4 * n < size ? MIN_BUFFER : size;
    }
    return n;
  });
}

/** The result of the read ahead, as `fill` gives it. */
async function takeAhead(r: BufferedConn): Promise<number | null> {
  const room = r.buf.length - r.end;
  const n = await r.ahead!;
  r.ahead = undefined;
  if (n instanceof ReadFailed) throw n.error;
  if (n !== null) {
    r.end += n;
    const size = r.buf.length;
    r.want = n === room ? Math.min(MAX_BUFFER, 2 * size) : 4 * n < size ? MIN_BUFFER : size;
  }
  return n;
}

export function closeQuietly(conn: Conn | undefined): void {
  try {
    conn?.close();
  } catch { /* already closed */ }
}
