/**
 * A response head (RFC 9112 §4, §5): where it ends in the bytes read, and its status line and fields parsed,
 * with the body's framing decided (framing.ts). Pure: bytes in, a head out, so every byte split is tested
 * without sockets (head_test.ts).
 *
 * Two rule sets, chosen by the caller:
 * - "strict" (the upstream client, wire_client.ts): anything RFC 9112 does not let a client read is refused —
 *   a field name that is no token or has whitespace before its colon, a bare CR or LF in a line, a status
 *   under 100, Content-Length other than one number, Transfer-Encoding other than chunked once, or any in
 *   HTTP/1.0. A model provider has no reason to send these, and a head read one way here and another way by
 *   a proxy in front of the upstream is how a response is split.
 * - "lenient" (the page fetch, pinned_fetch.ts): a head any web server may send, read as Fetch reads it —
 *   whitespace before a field's colon, Content-Length repeated as a list of one number, other codings before
 *   chunked (a body that is not chunked last runs to the end of the connection), and the framing fields
 *   checked only in a final head. One request per connection there, so no answer can leak into another.
 */
import { Http1Failure } from "./failure.ts";
import {
  type BodyFraming,
  bodyFraming,
  lenientChunked,
  lenientLength,
  strictChunked,
  strictLength,
} from "./framing.ts";

/** A response head bigger than this fails the call (Deno's own server allows 64 KiB). */
export const MAX_HEAD_BYTES = 64 * 1024;

export type HeadRules = "strict" | "lenient";

export interface ResponseHead {
  status: number;
  statusText: string;
  /** Header fields as received (name, value; names lowercased, values trimmed), for a Response's Headers. */
  headers: [string, string][];
  framing: BodyFraming;
  /** The connection may carry another request once this body is read to its end. */
  keepAlive: boolean;
}

const latin1 = new TextDecoder("latin1");
const ascii = new TextDecoder();

/** Whether every byte is below 0x80: four at a time where they are aligned to four. */
function isAscii(bytes: Uint8Array): boolean {
  const n = bytes.length;
  let i = 0;
  for (; i < n && ((bytes.byteOffset + i) & 3) !== 0; i++) if (bytes[i]! >= 0x80) return false;
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset + i, (n - i) >> 2);
  for (let w = 0; w < words.length; w++) if ((words[w]! & 0x80808080) !== 0) return false;
  for (i += words.length * 4; i < n; i++) if (bytes[i]! >= 0x80) return false;
  return true;
}

/** Head bytes as text, one code point per byte (Fetch's header bytes). An all-ASCII head (the usual one) takes
 *  the runtime's fast UTF-8 path, which gives the same text; the latin1 decoder is an op call of its own. */
function headText(bytes: Uint8Array): string {
  return isAscii(bytes) ? ascii.decode(bytes) : latin1.decode(bytes);
}

/** What `String.prototype.trim` removes, among the code points a head's text holds (≤ U+00FF). */
const isTrimmed = (c: number) => c === 32 || (c >= 9 && c <= 13) || c === 0xa0;

/** `text.slice(from, to).trim()`, with one string made instead of two. */
function trimmedSlice(text: string, from: number, to: number): string {
  while (from < to && isTrimmed(text.charCodeAt(from))) from++;
  while (to > from && isTrimmed(text.charCodeAt(to - 1))) to--;
  return text.slice(from, to);
}
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/;
/** Bytes no field may hold (RFC 9110 §5.5): refused here as Fetch's Headers refuse them. */
const BAD_FIELD_BYTE = /[\0\r\n]/;
/** Where a field line holds one of them: a NUL, or a CR or LF that is not a line's CRLF. */
const BAD_LINE_BYTE = /\0|\r(?!\n)|(?<!\r)\n/g;
/** A field name is a token (RFC 9110 §5.1); strictly, with no whitespace before its colon (RFC 9112 §5.1). */
const FIELD_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** The same, matched in place at a line's start up to its first colon; first as a name already in lower case. */
const LOWER_NAME_COLON = /[!#$%&'*+\-.^_`|~0-9a-z]+:/y;
const NAME_COLON = /[!#$%&'*+\-.^_`|~0-9A-Za-z]+:/y;

/** Where the head ends in `buf[from, to)` (the index after its blank line), or -1 while incomplete. */
export function headEnd(buf: Uint8Array, from: number, to: number): number {
  // From LF to LF (a native scan), not byte by byte: a provider's head has 15–25 lines in ≈1 KB.
  for (let i = buf.indexOf(10, from + 3); i >= 0 && i < to; i = buf.indexOf(10, i + 1)) {
    if (buf[i - 1] === 13 && buf[i - 2] === 10 && buf[i - 3] === 13) return i + 1;
  }
  return -1;
}

/**
 * The head in `bytes` (up to and including its blank line) of the answer to a request with a body (no HEAD),
 * read by `rules`. Throws Http1Failure on what those rules refuse.
 */
export function parseHead(bytes: Uint8Array, rules: HeadRules): ResponseHead {
  const lenient = rules === "lenient";
  const text = headText(bytes);
  // The lines are the pieces between CRLFs; the head ends with two CRLFs, so its field lines are every piece
  // but the status line and the last two (both empty), read in place without splitting the text.
  const statusEnd = text.indexOf("\r\n");
  const m = STATUS_LINE.exec(statusEnd < 0 ? text : text.slice(0, statusEnd));
  if (!m) throw new Http1Failure("not an HTTP/1.x status line");
  const status = Number(m[2]);
  // A status under 100 is no interim head (RFC 9110 §15); leniently it is read past as one.
  if (status < 100 && !lenient) throw new Http1Failure(`status ${m[2]}`);
  const fields = new HeadFields(rules, m[1] === "0");
  const fieldsEnd = text.lastIndexOf("\r\n", text.lastIndexOf("\r\n") - 1);
  // Strictly, the first byte a field line may not hold, found once: the line that holds it is refused.
  BAD_LINE_BYTE.lastIndex = statusEnd + 2;
  const bad = lenient || statusEnd < 0 ? text.length : BAD_LINE_BYTE.exec(text)?.index ?? text.length;
  for (let start = statusEnd + 2; statusEnd >= 0 && start <= fieldsEnd;) {
    const end = text.indexOf("\r\n", start);
    let name: string;
    let colon: number;
    if (lenient) {
      // A colon past the line's end leaves its CRLF in the name, which is then no token.
      colon = text.indexOf(":", start);
      const raw = text.slice(start, colon).trimEnd();
      if (colon <= start || !FIELD_NAME.test(raw)) throw new Http1Failure("malformed header line");
      name = raw.toLowerCase();
    } else {
      LOWER_NAME_COLON.lastIndex = start;
      if (LOWER_NAME_COLON.test(text)) {
        colon = LOWER_NAME_COLON.lastIndex - 1;
        name = text.slice(start, colon);
      } else {
        NAME_COLON.lastIndex = start;
        if (!NAME_COLON.test(text)) throw new Http1Failure("malformed header line");
        colon = NAME_COLON.lastIndex - 1;
        name = text.slice(start, colon).toLowerCase();
      }
      if (bad < end) throw new Http1Failure("malformed header line");
    }
    const value = trimmedSlice(text, colon + 1, end);
    if (lenient && BAD_FIELD_BYTE.test(value)) throw new Http1Failure("malformed header line");
    start = end + 2;
    fields.add(name, value);
  }
  return fields.head(status, m[3] ?? "");
}

/**
 * A head's fields as its lines are read, in order, and the head they make: the body's framing and whether the
 * connection is reused (RFC 9112 §6, §9.3). The reading of the lines is parseHead's; the rules for the framing
 * fields are these, strict or lenient, checked field by field in the order the lines come.
 */
export class HeadFields {
  readonly #headers: [string, string][] = [];
  readonly #lenient: boolean;
  readonly #http10: boolean;
  #length: string | undefined;
  #chunked = false;
  #close: boolean;
  /** Lenient: the framing fields' values, judged together once the head is read. */
  #lengths: string[] | undefined;
  #codings: string[] | undefined;

  constructor(rules: HeadRules, http10: boolean) {
    this.#lenient = rules === "lenient";
    this.#http10 = http10;
    this.#close = http10;
  }

  /** One field, its name lower-case and its value trimmed. Throws Http1Failure on a framing field refused. */
  add(name: string, value: string): void {
    this.#headers.push([name, value]);
    if (name === "content-length") {
      if (this.#lenient) (this.#lengths ??= []).push(value);
      else this.#length = strictLength(value, this.#length);
    } else if (name === "transfer-encoding") {
      if (this.#lenient) (this.#codings ??= []).push(value);
      else this.#chunked = strictChunked(value, this.#chunked);
    } else if (name === "connection") {
      const tokens = value.toLowerCase().split(",").map((s) => s.trim());
      if (tokens.includes("close")) this.#close = true;
    }
  }

  /** The head, once every field is added. */
  head(status: number, statusText: string): ResponseHead {
    if (this.#lenient) {
      // Transfer-Encoding present: Content-Length is not read (RFC 9112 §6.3).
      if (this.#codings) this.#chunked = lenientChunked(this.#codings);
      else if (this.#lengths && status >= 200) this.#length = lenientLength(this.#lengths);
    } else if (this.#chunked && this.#http10) {
      // Transfer-Encoding in an HTTP/1.0 message: the framing is faulty (RFC 9112 §6.1), refused as fetch does.
      throw new Http1Failure("Transfer-Encoding in an HTTP/1.0 response");
    }
    const framing = bodyFraming(status, this.#chunked, this.#length);
    return {
      status,
      statusText,
      headers: this.#headers,
      framing,
      keepAlive: !this.#close && framing.kind !== "close" &&
        !(this.#chunked && (this.#length ?? this.#lengths) !== undefined),
    };
  }
}
