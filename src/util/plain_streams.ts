/**
 * A ReadableStream known to be plain (not a byte stream), made so by whoever creates it (the upstream wire
 * client's bodies). A reader that prefers BYOB (src/protocols/sse_parse.ts) asks `isPlain` instead of probing
 * with `getReader({ mode: "byob" })`, whose TypeError on a plain stream cost every stream a thrown exception
 * (≈2 µs under load, more at one connection, on the way to the first byte). A subclass, not a
 * WeakSet of marked streams: `instanceof` costs nothing, a WeakSet entry per response ≈1 µs.
 */
export class PlainStream<R> extends ReadableStream<R> {}

export function isPlain(stream: ReadableStream): boolean {
  return stream instanceof PlainStream;
}
