/**
 * ReadableStreams known to be plain (not byte streams), marked by whoever made them (the upstream wire
 * client's bodies). A reader that prefers BYOB (src/protocols/sse_parse.ts) asks here instead of probing with
 * `getReader({ mode: "byob" })`, whose TypeError on a plain stream cost every stream a thrown exception
 * (issue 18: ≈2 µs under load, more at one connection, on the way to the first byte).
 */
const plain = new WeakSet<ReadableStream>();

export function markPlain<S extends ReadableStream>(stream: S): S {
  plain.add(stream);
  return stream;
}

export function isPlain(stream: ReadableStream): boolean {
  return plain.has(stream);
}
