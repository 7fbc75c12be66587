/**
 * Answers sent in one write. Deno 2.9's HTTP/1.1 server writes an answer of known length in one write only
 * while its head and body fit in 512 bytes together (its per-connection write buffer); past that, head and
 * body are two writes, two TCP segments, and on loopback two wake-ups of the reader. A chunked answer is
 * gathered, head, chunk and terminator, into one write up to 64 KiB. So every JSON answer the gateway makes
 * (success and error) is sent chunked: ≈10 bytes more on the wire, one write instead of two
 * (docs/performance.md, "One write per answer"). Deno chunks only where HTTP/1.1 allows it: an HTTP/1.0 or
 * HTTP/2 client gets Content-Length instead (tests/api/one_write_test.ts).
 */
export const ONE_WRITE: Readonly<Record<string, string>> = Object.freeze({ "transfer-encoding": "chunked" });
