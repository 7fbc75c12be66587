/**
 * One upstream answer's body read off its connection chunk by chunk (`bodyChunks`, for wire_client.ts): framed by
 * the HTTP/1.1 module (src/http1: Content-Length, chunked, or to the connection's end) over the connection's
 * buffered reader (src/http1/reader.ts), and, after a cancel, read on briefly so that the connection can be
 * reused.
 */
import type { ChunkSource } from "../util/chunk_source.ts";
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
 * One answer's body as a ChunkSource (src/util/chunk_source.ts): read from the connection only when asked
 * (backpressure), each `next` one read's worth, whole: a BYOB reader would take it in pieces of its own
 * buffer's size, one decode and one translation each (sse_parse.ts), where one read's worth goes whole (20%
 * more streams/s). At its end `release(true)` when the connection may carry another request (keep-alive,
 * nothing of a next answer buffered); failed, or cancelled and not drained cleanly, `release(false)`. Once.
 */
export function bodyChunks(
  link: BufferedConn,
  head: ResponseHead,
  signal: AbortSignal,
  release: (reuse: boolean) => void,
  owner: DrainOwner,
): ChunkSource {
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
  /** Set at the end, a failure or a cancel: from then on every `next` answers undefined (a pending one too). */
  let closed = false;
  const failed = (err: unknown): undefined => {
    if (closed) return undefined; // cancelled while the read was pending
    finish(false);
    closed = true;
    throw signal.aborted ? signal.reason : upstreamFailure(err);
  };
  /** What is buffered: a chunk, undefined at the body's end, or null when a read must come first. */
  const buffered = (): Uint8Array | undefined | null => {
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
      if (over) closed = true;
      return out;
    }
    if (ended()) {
      finish(head.keepAlive);
      closed = true;
      return undefined;
    }
    if (link.start === link.end) link.start = link.end = 0;
    return null;
  };
  // `then`, not an async function: a suspended one is an object of its own, held by every idle stream.
  const filled = (n: number | null): Uint8Array | undefined | Promise<Uint8Array | undefined> => {
    if (n !== null) return next();
    if (framing.kind !== "close") {
      return failed(new UpstreamProtocolFailure("connection closed before the end of the body"));
    }
    finish(false);
    closed = true;
    return undefined;
  };
  const next = (): Promise<Uint8Array | undefined> => {
    if (closed) return Promise.resolve(undefined);
    try {
      const now = buffered();
      if (now !== null) return Promise.resolve(now);
      return fill(link, MAX_BUFFER).then(filled, failed);
    } catch (err) {
      return Promise.reject(err).catch(failed);
    }
  };
  return {
    next,
    cancel: () => {
      closed = true;
      if (!over) void drain();
      return Promise.resolve();
    },
  };
}
