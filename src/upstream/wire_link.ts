/**
 * The read side of an upstream connection (wire_client.ts): the connection with its read buffer, one read at a
 * time (`fill`), and one answer's body read off it as a stream (`bodyStream`), framed by http1_framing.ts and,
 * after a cancel, read on briefly so that the connection can be reused.
 *
 * A connection's next read is issued ahead of need (`readAhead`): when it goes idle in the pool, and before a
 * request is written on a new one. Deno cannot cancel a read without closing the connection, so this read is
 * the watch: whatever settles it while the connection is idle (a byte, end of stream, an error) closes it, and
 * settling before the request is completely written marks an answer that came early. It costs nothing per
 * request: it is the read the next answer's head needs anyway, and the first `fill` takes its result.
 */
import { PlainStream } from "../util/plain_streams.ts";
import { deadline } from "../util/ticker.ts";
import { ChunkedDecoder, type ResponseHead, UpstreamProtocolFailure } from "./http1_framing.ts";
import type { EntryList } from "../util/entry_list.ts";

export type Conn = Deno.TcpConn | Deno.TlsConn;

/** A connection with its read buffer: what the previous read brought past the answer's end stays in it. */
export interface Link {
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
  /** Set while the connection is idle in a pool: the read ahead settling calls it (the pool drops it). */
  idleWatch: (() => void) | undefined;
}

/** A read ahead that failed: kept as a value (nobody may be waiting for it) and thrown by the `fill` that takes it. */
class ReadFailed {
  constructor(readonly error: unknown) {}
}

/** What a cancelled body's drain needs from the client that owns the connection. */
export interface DrainOwner {
  /** Connections being drained: the owner closes them if it closes meanwhile. */
  draining: EntryList<Conn>;
  /** The owner has closed: a drain stops at once. */
  closed(): boolean;
}

const MIN_BUFFER = 2048;
const MAX_BUFFER = 16 * 1024;
/**
 * A body cancelled before its end is read on for at most this long and this many bytes: a reader that stopped
 * at the answer's end (the stream pipeline after its terminal frames) would otherwise close a connection whose
 * last bytes (chunked coding's terminator) were about to arrive, and the next request would pay a connect.
 */
const DRAIN_MS = 200;
const DRAIN_BYTES = 4096;

export function newLink(conn: Conn): Link {
  return {
    conn,
    buf: new Uint8Array(MIN_BUFFER),
    start: 0,
    end: 0,
    want: MIN_BUFFER,
    ahead: undefined,
    arrived: false,
    idleWatch: undefined,
  };
}

/**
 * Issues the next read of a connection whose buffer holds nothing (a new one, or one whose answer ended
 * exactly), into its buffer sized as `fill` sizes it. Its result waits in `link.ahead` for the next `fill`;
 * when it settles `link.arrived` is set and `link.idleWatch`, if set then, is called.
 */
export function readAhead(link: Link): void {
  if (link.buf.length !== link.want) link.buf = new Uint8Array(link.want);
  link.start = link.end = 0;
  link.arrived = false;
  const settled = (r: number | null | ReadFailed) => {
    link.arrived = true;
    link.idleWatch?.();
    return r;
  };
  link.ahead = link.conn.read(link.buf.subarray(link.end)).then(
    settled,
    (err) => settled(new ReadFailed(err)),
  );
}

/**
 * One answer's body as a stream: read from the connection only when pulled (backpressure), each pull one read's
 * worth. A plain stream, not a byte stream: a BYOB reader would take it in pieces of its own buffer's size, one
 * decode and one translation each (sse_parse.ts), where one read's worth goes whole (20% more streams/s). At its
 * end `release(true)` when the connection may carry another request (keep-alive, nothing of a next answer
 * buffered); failed, or cancelled and not drained cleanly, `release(false)`. Once.
 */
export function bodyStream(
  link: Link,
  head: ResponseHead,
  signal: AbortSignal,
  release: (reuse: boolean) => void,
  owner: DrainOwner,
): ReadableStream<Uint8Array> {
  const framing = head.framing;
  let left = framing.kind === "length" ? framing.length : Infinity;
  const chunked = framing.kind === "chunked" ? new ChunkedDecoder() : undefined;
  let over = false;
  const finish = (reuse: boolean) => {
    if (over) return;
    over = true;
    release(reuse && link.start === link.end);
  };
  /** Data from what is buffered: one or more views, or none when the buffer holds no complete data. */
  const take = (): Uint8Array[] => {
    if (chunked) {
      const { data, used } = chunked.push(link.buf, link.start, link.end);
      link.start += used;
      return data;
    }
    const n = Math.min(left, link.end - link.start);
    if (n === 0) return [];
    const view = link.buf.subarray(link.start, link.start + n);
    link.start += n;
    left -= n;
    return [view];
  };
  const ended = () => chunked ? chunked.done : left === 0;
  /** After a cancel: reads the rest (discarded) within DRAIN_MS and DRAIN_BYTES; the connection is kept only
   *  if the body ended cleanly. */
  const drain = async () => {
    const draining = owner.draining.add(link.conn);
    const stop = deadline(DRAIN_MS, () => finish(false)); // closes the socket: a pending read rejects
    let read = 0;
    try {
      for (;;) {
        while (!over && !ended() && take().length > 0);
        if (over) return;
        if (ended()) return finish(head.keepAlive);
        if (link.start === link.end) link.start = link.end = 0;
        const n = owner.closed() ? null : await fill(link, MAX_BUFFER);
        if (n === null || (read += n) > DRAIN_BYTES) return finish(false);
      }
    } catch {
      finish(false);
    } finally {
      stop();
      owner.draining.remove(draining);
    }
  };
  return new PlainStream<Uint8Array>({
    pull: async (c) => {
      try {
        for (;;) {
          const data = take();
          if (data.length > 0) {
            // Copies: the buffer is read into again.
            const total = data.reduce((s, d) => s + d.length, 0);
            const out = new Uint8Array(total);
            let at = 0;
            for (const d of data) {
              out.set(d, at);
              at += d.length;
            }
            if (ended()) finish(head.keepAlive);
            c.enqueue(out);
            if (over) c.close();
            return;
          }
          if (ended()) {
            finish(head.keepAlive);
            c.close();
            return;
          }
          if (link.start === link.end) link.start = link.end = 0;
          const n = await fill(link, MAX_BUFFER);
          if (n === null) {
            if (framing.kind === "close") {
              finish(false);
              c.close();
              return;
            }
            throw new UpstreamProtocolFailure("connection closed before the end of the body");
          }
        }
      } catch (err) {
        finish(false);
        c.error(signal.aborted ? signal.reason : err);
      }
    },
    cancel: () => {
      if (!over) void drain();
    },
  }, { highWaterMark: 0 });
}

/**
 * Reads once into the link's buffer after `end`, growing it (up to `max`) when full; null at end of stream.
 * An empty buffer is first sized by the last read: one that filled all the room doubles it (up to MAX_BUFFER:
 * more was waiting, so a burst — a fast upstream's whole stream — comes in a few reads, each one pipeline
 * step), one that brought under a quarter of it brings it back to MIN_BUFFER (what an idle stream holds).
 * A read issued ahead (readAhead) is this read: its result is taken instead of reading again.
 */
export function fill(link: Link, max: number): Promise<number | null> {
  return link.ahead ? takeAhead(link) : readMore(link, max);
}

async function readMore(link: Link, max: number): Promise<number | null> {
  if (link.start === link.end && link.buf.length !== link.want) {
    link.buf = new Uint8Array(link.want);
    link.start = link.end = 0;
  }
  if (link.start > 0 && link.end === link.buf.length) {
    link.buf.copyWithin(0, link.start, link.end);
    link.end -= link.start;
    link.start = 0;
  }
  if (link.end === link.buf.length) {
    if (link.buf.length >= max) throw new UpstreamProtocolFailure("response line too long");
    const grown = new Uint8Array(Math.min(max, link.buf.length * 2));
    grown.set(link.buf.subarray(0, link.end));
    link.buf = grown;
  }
  const room = link.buf.length - link.end;
  const n = await link.conn.read(link.buf.subarray(link.end));
  if (n !== null) {
    link.end += n;
    const size = link.buf.length;
    link.want = n === room ? Math.min(MAX_BUFFER, 2 * size) : 4 * n < size ? MIN_BUFFER : size;
  }
  return n;
}

/** The result of the read ahead, as `fill` gives it. */
async function takeAhead(link: Link): Promise<number | null> {
  const room = link.buf.length - link.end;
  const r = await link.ahead!;
  link.ahead = undefined;
  if (r instanceof ReadFailed) throw r.error;
  if (r !== null) {
    link.end += r;
    const size = link.buf.length;
    link.want = r === room ? Math.min(MAX_BUFFER, 2 * size) : 4 * r < size ? MIN_BUFFER : size;
  }
  return r;
}

export function closeQuietly(conn: Conn | undefined): void {
  try {
    conn?.close();
  } catch { /* already closed */ }
}
