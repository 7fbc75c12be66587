import { createParser } from "eventsource-parser";
import { isPlain } from "../util/plain_streams.ts";
import type { SseFrame } from "./codec.ts";

/** A line longer than this (an upstream that never ends its event) fails the stream instead of growing memory. */
const MAX_EVENT_BYTES = 16 * 1024 * 1024;

/**
 * The upstream read buffer: each read gets one twice the size of what the last read brought, a power of two
 * within these bounds — so a burst grows it and a quiet stream (token by token, a few hundred bytes a read)
 * waits on the smallest. An idle stream holds its pending read's buffer: 1 KiB instead of a fixed 4 KiB saved
 * ~2 KB per idle stream (docs/performance.md "Idle streams: what one holds"). 16 KiB read no faster than 4 KiB
 * under load.
 */
const MIN_READ_BYTES = 1024;
const MAX_READ_BYTES = 16 * 1024;

/** The parsed SSE frames of an upstream body, read as the caller asks (nothing is read ahead). */
export interface FrameReader {
  /**
   * The frames of the next upstream read that completed any (reads that complete none are read past);
   * undefined once the body has ended and its last frames were returned. Rejects when the body fails or
   * a frame is malformed past repair (an event over MAX_EVENT_BYTES).
   */
  read(): Promise<SseFrame[] | undefined>;
  /** Cancels the body; a pending read resolves with undefined. */
  cancel(reason?: unknown): Promise<void>;
}

/**
 * Upstream body bytes → parsed SSE frames, one batch per upstream read, so that everything the upstream sent
 * in one read goes to the client in one write. The parser is the standard one (eventsource-parser); no
 * hand-made line splitting. Byte streams (fetch bodies) are read BYOB into a reused buffer: the runtime's
 * default reader would pin a fresh 64 KiB buffer per pending read, which is most of the memory of a thousand
 * quiet streams. The wire client's body (src/upstream/wire_client.ts) is a plain stream, read with the default
 * reader (a PlainStream, src/util/plain_streams.ts, so no BYOB probe throws for it): each read hands over
 * all that one socket read brought, and a pending read holds no buffer of its own. A reader, not a
 * ReadableStream of batches: the stream pipeline is its only consumer, and a stream between them cost each
 * idle stream its own objects and a promise chain.
 */
export function sseFrameReader(body: ReadableStream<Uint8Array>): FrameReader {
  const decoder = new TextDecoder();
  let batch: SseFrame[] = [];
  let failure: Error | undefined;
  const parser = createParser({
    maxBufferSize: MAX_EVENT_BYTES,
    onEvent: (msg) => batch.push(msg.event ? { event: msg.event, data: msg.data } : { data: msg.data }),
    onError: (err) => {
      failure = err;
    },
  });
  const bytes = byteReader(body);
  let ended = false;
  return {
    async read() {
      while (!ended) {
        const chunk = await bytes.next();
        if (chunk === undefined) ended = true;
        parser.feed(chunk === undefined ? decoder.decode() : decoder.decode(chunk, { stream: true }));
        if (failure) throw failure;
        if (batch.length > 0) {
          const out = batch;
          batch = [];
          return out;
        }
      }
      return undefined;
    },
    cancel: (reason) => bytes.cancel(reason),
  };
}

/** Reads a body chunk by chunk (undefined at the end), BYOB into a reused buffer where the stream allows it. */
function byteReader(body: ReadableStream<Uint8Array>) {
  let byob: ReadableStreamBYOBReader | undefined;
  if (!isPlain(body)) {
    try {
      byob = body.getReader({ mode: "byob" });
    } catch {
      byob = undefined; // a plain stream of another kind
    }
  }
  if (byob) {
    const reader = byob;
    let buffer = new Uint8Array(MIN_READ_BYTES);
    // `then`, not an async function: a suspended one is an object of its own, held by every idle stream.
    const took = ({ done, value }: ReadableStreamReadResult<Uint8Array<ArrayBuffer>>) => {
      if (done || !value) return undefined;
      const size = readSize(value.byteLength);
      // The read transferred the buffer: take it back for the next read, or one of the size now wanted.
      buffer = size === value.buffer.byteLength ? new Uint8Array(value.buffer) : new Uint8Array(size);
      return value;
    };
    return {
      next: (): Promise<Uint8Array | undefined> => reader.read(buffer).then(took),
      cancel: (reason?: unknown) => reader.cancel(reason),
    };
  }
  const reader = body.getReader();
  return {
    next: (): Promise<Uint8Array | undefined> =>
      reader.read().then(({ done, value }) => done ? undefined : value),
    cancel: (reason?: unknown) => reader.cancel(reason),
  };
}

/** The next read's buffer size after a read of `n` bytes (MIN_READ_BYTES). */
function readSize(n: number): number {
  let size = MIN_READ_BYTES;
  while (size < 2 * n && size < MAX_READ_BYTES) size *= 2;
  return size;
}

/** Test helper: replay recorded SSE text through the real parser, cut into byte chunks at `cuts`. */
export async function replaySse(text: string, cuts: number[] = []): Promise<SseFrame[]> {
  const bytes = new TextEncoder().encode(text);
  const points = [...new Set(cuts.filter((c) => c > 0 && c < bytes.length))].sort((a, b) => a - b);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      let prev = 0;
      for (const p of [...points, bytes.length]) {
        controller.enqueue(bytes.slice(prev, p));
        prev = p;
      }
      controller.close();
    },
  });
  const out: SseFrame[] = [];
  const frames = sseFrameReader(body);
  for (let batch = await frames.read(); batch; batch = await frames.read()) out.push(...batch);
  return out;
}
