/**
 * A body read chunk by chunk, without a ReadableStream in between: the stream pipeline reads its upstream
 * through one (src/protocols/sse_parse.ts). The wire client's bodies are one of their own
 * (src/upstream/wire_link.ts); a Fetch body becomes one with `streamChunks`. A ReadableStream between a
 * socket and its one reader cost each idle stream its stream, controller, reader, queues and a suspended
 * pull (docs/performance.md "Idle streams: what one holds").
 */
import { isPlain, PlainStream } from "./plain_streams.ts";

export interface ChunkSource {
  /** The next chunk; undefined once the body has ended (and at every call after). Rejects when it fails. */
  next(): Promise<Uint8Array | undefined>;
  /** Stops reading; a pending `next` resolves with undefined or rejects. */
  cancel(reason?: unknown): Promise<void>;
}

/**
 * The read buffer of a byte stream: each read gets one twice the size of what the last read brought, a power
 * of two within these bounds — so a burst grows it and a quiet stream (token by token, a few hundred bytes a
 * read) waits on the smallest. An idle stream holds its pending read's buffer: 1 KiB instead of a fixed 4 KiB
 * saved ~2 KB per idle stream. 16 KiB read no faster than 4 KiB under load.
 */
const MIN_READ_BYTES = 1024;
const MAX_READ_BYTES = 16 * 1024;

/**
 * A ReadableStream's chunks: a byte stream (a Fetch body) read BYOB into a reused buffer, since the runtime's
 * default reader would pin a fresh 64 KiB buffer per pending read, most of the memory of a thousand quiet
 * streams; a plain stream (src/util/plain_streams.ts: no BYOB probe that throws for it) read as it comes.
 */
export function streamChunks(body: ReadableStream<Uint8Array>): ChunkSource {
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

/** Bytes that are all there already, as one chunk. */
export function wholeChunks(bytes: Uint8Array): ChunkSource {
  let left: Uint8Array | undefined = bytes;
  return {
    next: () => {
      const chunk = left;
      left = undefined;
      return Promise.resolve(chunk);
    },
    cancel: () => {
      left = undefined;
      return Promise.resolve();
    },
  };
}

/** A source as a plain ReadableStream, one chunk per pull, for a reader that wants a stream. */
export function chunkStream(source: ChunkSource): ReadableStream<Uint8Array> {
  return new PlainStream<Uint8Array>({
    pull: (c) =>
      source.next().then((chunk) => {
        if (chunk === undefined) c.close();
        else c.enqueue(chunk);
      }),
    cancel: (reason) => source.cancel(reason),
  }, { highWaterMark: 0 });
}

/** The next read's buffer size after a read of `n` bytes (MIN_READ_BYTES). */
function readSize(n: number): number {
  let size = MIN_READ_BYTES;
  while (size < 2 * n && size < MAX_READ_BYTES) size *= 2;
  return size;
}
