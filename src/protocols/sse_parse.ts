import { createParser } from "eventsource-parser";
import { type ChunkSource, streamChunks } from "../util/chunk_source.ts";
import type { SseFrame } from "./codec.ts";

/** A line longer than this (an upstream that never ends its event) fails the stream instead of growing memory. */
const MAX_EVENT_BYTES = 16 * 1024 * 1024;

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
 * hand-made line splitting. The body comes as a ChunkSource (src/util/chunk_source.ts): the wire client's
 * own, or a Fetch body read BYOB. A reader, not a ReadableStream of batches: the stream pipeline is its only
 * consumer, and a stream between them cost each idle stream its own objects and a promise chain.
 */
export function sseFrameReader(bytes: ChunkSource): FrameReader {
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
  let ended = false;
  // `then`, not an async function: a suspended one is an object of its own, held by every idle stream.
  const took = (chunk: Uint8Array | undefined): SseFrame[] | undefined | Promise<SseFrame[] | undefined> => {
    if (chunk === undefined) ended = true;
    parser.feed(chunk === undefined ? decoder.decode() : decoder.decode(chunk, { stream: true }));
    if (failure) throw failure;
    if (batch.length === 0) return read(); // a read that completed no frame: read on
    const out = batch;
    batch = [];
    return out;
  };
  const read = (): Promise<SseFrame[] | undefined> =>
    ended ? Promise.resolve(undefined) : bytes.next().then(took);
  return { read, cancel: (reason) => bytes.cancel(reason) };
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
  const frames = sseFrameReader(streamChunks(body));
  for (let batch = await frames.read(); batch; batch = await frames.read()) out.push(...batch);
  return out;
}
