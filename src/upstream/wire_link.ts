/**
 * One upstream answer's body read off its connection as a stream (`bodyStream`, for wire_client.ts): framed by
 * the HTTP/1.1 module (src/http1: Content-Length, chunked, or to the connection's end) over the connection's
 * buffered reader (src/http1/reader.ts), and, after a cancel, read on briefly so that the connection can be
 * reused.
 */
import { PlainStream } from "../util/plain_streams.ts";
import { deadline } from "../util/ticker.ts";
import { ChunkedDecoder } from "../http1/chunked.ts";
import type { ResponseHead } from "../http1/head.ts";
import { type BufferedConn, type Conn, fill, MAX_BUFFER } from "../http1/reader.ts";
import { upstreamFailure, UpstreamProtocolFailure } from "./protocol_failure.ts";
import type { EntryList } from "../util/entry_list.ts";

/** What a cancelled body's drain needs from the client that owns the connection. */
export interface DrainOwner {
  /** Connections being drained: the owner closes them if it closes meanwhile. */
  draining: EntryList<Conn>;
  /** The owner has closed: a drain stops at once. */
  closed(): boolean;
}

/**
 * A body cancelled before its end is read on for at most this long and this many bytes: a reader that stopped
 * at the answer's end (the stream pipeline after its terminal frames) would otherwise close a connection whose
 * last bytes (chunked coding's terminator) were about to arrive, and the next request would pay a connect.
 */
const DRAIN_MS = 200;
const DRAIN_BYTES = 4096;

/**
 * One answer's body as a stream: read from the connection only when pulled (backpressure), each pull one read's
 * worth. A plain stream, not a byte stream: a BYOB reader would take it in pieces of its own buffer's size, one
 * decode and one translation each (sse_parse.ts), where one read's worth goes whole (20% more streams/s). At its
 * end `release(true)` when the connection may carry another request (keep-alive, nothing of a next answer
 * buffered); failed, or cancelled and not drained cleanly, `release(false)`. Once.
 */
export function bodyStream(
  link: BufferedConn,
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
        c.error(signal.aborted ? signal.reason : upstreamFailure(err));
      }
    },
    cancel: () => {
      if (!over) void drain();
    },
  }, { highWaterMark: 0 });
}
