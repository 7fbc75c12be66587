/**
 * The chunked transfer coding decoded (RFC 9112 §7.1) as bytes arrive: data out as views into the bytes read,
 * the chunk-size lines, extensions and the trailer section read past and bounded. Pure, so every byte split is
 * tested without sockets (chunked_test.ts).
 */
import { Http1Failure } from "./failure.ts";
import { MAX_HEAD_BYTES } from "./head.ts";

/** A chunk-size line (with extensions) or a trailer line longer than this fails the body. */
const MAX_LINE_BYTES = 4096;
/** A trailer section longer than this fails the body (as a head would). */
const MAX_TRAILER_BYTES = MAX_HEAD_BYTES;

/**
 * Chunked coding → data (RFC 9112 §7.1), fed whatever bytes arrive. `push` takes the bytes of one read and
 * returns the data they held (views into them) and how many it consumed; bytes of an incomplete size line are
 * left for the next push with more behind them. Extensions and trailers are read past.
 */
export class ChunkedDecoder {
  /** Data bytes left in the current chunk; -1 between chunks (a size line next). */
  #left = -1;
  /** The CRLF after a chunk's data is still to come. */
  #crlf = false;
  /** In the trailer section (after the last chunk): lines until an empty one. */
  #trailers = false;
  /** Bytes of the trailer section so far. */
  #trailerBytes = 0;
  done = false;

  /** Data in `buf[from, to)`; `used` is how far it read (the rest waits for more bytes). */
  push(buf: Uint8Array, from: number, to: number): { data: Uint8Array[]; used: number } {
    const data: Uint8Array[] = [];
    let at = from;
    while (at < to && !this.done) {
      if (this.#left > 0) {
        const n = Math.min(this.#left, to - at);
        data.push(buf.subarray(at, at + n));
        at += n;
        this.#left -= n;
        if (this.#left === 0) this.#crlf = true;
        continue;
      }
      if (this.#crlf) {
        if (to - at < 2) break;
        if (buf[at] !== 13 || buf[at + 1] !== 10) {
          throw new Http1Failure("chunk not followed by CRLF");
        }
        at += 2;
        this.#crlf = false;
        this.#left = -1;
        continue;
      }
      const eol = lineEnd(buf, at, to);
      if (eol < 0) {
        if (to - at > MAX_LINE_BYTES) throw new Http1Failure("chunk line too long");
        break;
      }
      const line = at;
      at = eol;
      if (this.#trailers) {
        if (eol - 2 === line) this.done = true; // the blank line that ends the trailers
        else if ((this.#trailerBytes += eol - line) > MAX_TRAILER_BYTES) {
          throw new Http1Failure("trailer section too large");
        }
        continue;
      }
      const n = chunkSize(buf, line, eol - 2);
      if (n === 0) this.#trailers = true;
      else this.#left = n;
    }
    return { data, used: at - from };
  }
}

/**
 * The size on a chunk-size line `buf[from, to)`: 1 to 13 hex digits (an exact integer), whitespace around them
 * tolerated, extensions after `;` ignored. Read from the bytes: decoding each line to text was an op call per
 * chunk, and a model's stream is mostly chunks.
 */
function chunkSize(buf: Uint8Array, from: number, to: number): number {
  let end = from;
  while (end < to && buf[end] !== 0x3b) end++; // ';'
  while (from < end && isSpace(buf[from]!)) from++;
  while (end > from && isSpace(buf[end - 1]!)) end--;
  if (end - from < 1 || end - from > 13) throw new Http1Failure("invalid chunk size");
  let n = 0;
  for (let i = from; i < end; i++) {
    const v = hexValue(buf[i]!);
    if (v < 0) throw new Http1Failure("invalid chunk size");
    n = n * 16 + v;
  }
  return n;
}

/** SP, HTAB, LF, VT, FF, CR. */
const isSpace = (b: number) => b === 0x20 || (b >= 0x09 && b <= 0x0d);

function hexValue(b: number): number {
  if (b >= 0x30 && b <= 0x39) return b - 0x30;
  const lower = b | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

/** The index after the first CRLF in `buf[from, to)`, or -1. */
function lineEnd(buf: Uint8Array, from: number, to: number): number {
  for (let i = from + 1; i < to; i++) if (buf[i] === 10 && buf[i - 1] === 13) return i + 1;
  return -1;
}
