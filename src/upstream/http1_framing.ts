/**
 * HTTP/1.1 response framing for the upstream client (wire_client.ts, RFC 9112): the head, then a body framed by
 * Content-Length, by chunked coding, or by the end of the connection. Pure: bytes in, parts out, so the byte
 * splits are tested without sockets (http1_framing_test.ts).
 */

/** A response the client cannot read as HTTP/1.1: the call fails like a broken connection. */
export class UpstreamProtocolFailure extends Error {
  constructor(message: string) {
    super(`upstream HTTP/1.1: ${message}`);
    this.name = "UpstreamProtocolFailure";
  }
}

/** A response head bigger than this fails the call (Deno's own server allows 64 KiB). */
export const MAX_HEAD_BYTES = 64 * 1024;
/** A chunk-size line (with extensions) or a trailer line longer than this fails the body. */
const MAX_LINE_BYTES = 4096;
/** A trailer section longer than this fails the body (as a head would). */
const MAX_TRAILER_BYTES = MAX_HEAD_BYTES;

export type BodyFraming =
  | { kind: "none" }
  | { kind: "length"; length: number }
  | { kind: "chunked" }
  | { kind: "close" };

export interface ResponseHead {
  status: number;
  statusText: string;
  /** Header fields as received (name, value), for the Response's Headers. */
  headers: [string, string][];
  framing: BodyFraming;
  /** The connection may carry another request once this body is read to its end. */
  keepAlive: boolean;
}

const latin1 = new TextDecoder("latin1");
const ascii = new TextDecoder();

/** Head bytes as text, one code point per byte (Fetch's header bytes). An all-ASCII head (the usual one) takes
 *  the runtime's fast UTF-8 path, which gives the same text; the latin1 decoder is an op call of its own. */
function headText(bytes: Uint8Array): string {
  for (let i = 0; i < bytes.length; i++) if (bytes[i]! >= 0x80) return latin1.decode(bytes);
  return ascii.decode(bytes);
}
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/;
/** Bytes no field may hold (RFC 9110 §5.5): refused here as Fetch's Headers refuse them. */
const BAD_FIELD_BYTE = /[\0\r\n]/;
/** A field name is a token, with no whitespace before its colon (RFC 9110 §5.1, RFC 9112 §5.1): a name read
 *  one way here and another way by a proxy in front of the upstream is how a response is split. */
const FIELD_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Where the head ends in `buf[from, to)` (the index after its blank line), or -1 while incomplete. */
export function headEnd(buf: Uint8Array, from: number, to: number): number {
  for (let i = from + 3; i < to; i++) {
    if (buf[i] === 10 && buf[i - 1] === 13 && buf[i - 2] === 10 && buf[i - 3] === 13) return i + 1;
  }
  return -1;
}

/**
 * The head in `bytes` (up to and including its blank line) of the answer to a request with a body (no HEAD).
 * Throws UpstreamProtocolFailure on anything RFC 9112 does not allow a client to read.
 */
export function parseHead(bytes: Uint8Array): ResponseHead {
  const lines = headText(bytes).split("\r\n");
  const m = STATUS_LINE.exec(lines[0]!);
  if (!m) throw new UpstreamProtocolFailure("not an HTTP/1.x status line");
  const status = Number(m[2]);
  if (status < 100) throw new UpstreamProtocolFailure(`status ${m[2]}`);
  const headers: [string, string][] = [];
  let length: string | undefined;
  let chunked = false;
  let close = m[1] === "0";
  // The head ends with two CRLFs: the last two split pieces are empty.
  for (let i = 1; i < lines.length - 2; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(":");
    const raw = line.slice(0, colon);
    if (colon <= 0 || !FIELD_NAME.test(raw) || BAD_FIELD_BYTE.test(line)) {
      throw new UpstreamProtocolFailure("malformed header line");
    }
    const name = raw.toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers.push([name, value]);
    if (name === "content-length") {
      // Repeated identical values are one length (RFC 9110 §8.6); different ones are unreadable.
      if (!/^\d{1,15}$/.test(value) || (length !== undefined && length !== value)) {
        throw new UpstreamProtocolFailure("invalid Content-Length");
      }
      length = value;
    } else if (name === "transfer-encoding") {
      // One coding, chunked, once (RFC 9112 §6.1: chunked is never applied twice; we ask for no other).
      const codings = value.toLowerCase().split(",").map((s) => s.trim());
      if (codings[codings.length - 1] !== "chunked" || codings.length > 1 || chunked) {
        throw new UpstreamProtocolFailure(`unsupported Transfer-Encoding: ${value}`);
      }
      chunked = true;
    } else if (name === "connection") {
      const tokens = value.toLowerCase().split(",").map((s) => s.trim());
      if (tokens.includes("close")) close = true;
    }
  }
  // Transfer-Encoding in an HTTP/1.0 message: the framing is faulty (RFC 9112 §6.1), refused as fetch does.
  if (chunked && m[1] === "0") throw new UpstreamProtocolFailure("Transfer-Encoding in an HTTP/1.0 response");
  const framing: BodyFraming = status < 200 || status === 204 || status === 304
    ? { kind: "none" }
    : chunked
    ? { kind: "chunked" } // Transfer-Encoding overrides Content-Length (RFC 9112 §6.3)
    : length !== undefined
    ? { kind: "length", length: Number(length) }
    : { kind: "close" };
  return {
    status,
    statusText: m[3] ?? "",
    headers,
    framing,
    keepAlive: !close && framing.kind !== "close" && !(chunked && length !== undefined),
  };
}

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
          throw new UpstreamProtocolFailure("chunk not followed by CRLF");
        }
        at += 2;
        this.#crlf = false;
        this.#left = -1;
        continue;
      }
      const eol = lineEnd(buf, at, to);
      if (eol < 0) {
        if (to - at > MAX_LINE_BYTES) throw new UpstreamProtocolFailure("chunk line too long");
        break;
      }
      const line = at;
      at = eol;
      if (this.#trailers) {
        if (eol - 2 === line) this.done = true; // the blank line that ends the trailers
        else if ((this.#trailerBytes += eol - line) > MAX_TRAILER_BYTES) {
          throw new UpstreamProtocolFailure("trailer section too large");
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
 * chunk, and a model's stream is mostly chunks (issue 18).
 */
function chunkSize(buf: Uint8Array, from: number, to: number): number {
  let end = from;
  while (end < to && buf[end] !== 0x3b) end++; // ';'
  while (from < end && isSpace(buf[from]!)) from++;
  while (end > from && isSpace(buf[end - 1]!)) end--;
  if (end - from < 1 || end - from > 13) throw new UpstreamProtocolFailure("invalid chunk size");
  let n = 0;
  for (let i = from; i < end; i++) {
    const v = hexValue(buf[i]!);
    if (v < 0) throw new UpstreamProtocolFailure("invalid chunk size");
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
