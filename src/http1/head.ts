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

/** Head bytes as text, one code point per byte (Fetch's header bytes). An all-ASCII head (the usual one) takes
 *  the runtime's fast UTF-8 path, which gives the same text; the latin1 decoder is an op call of its own. */
function headText(bytes: Uint8Array): string {
  for (let i = 0; i < bytes.length; i++) if (bytes[i]! >= 0x80) return latin1.decode(bytes);
  return ascii.decode(bytes);
}
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/;
/** Bytes no field may hold (RFC 9110 §5.5): refused here as Fetch's Headers refuse them. */
const BAD_FIELD_BYTE = /[\0\r\n]/;
/** A field name is a token (RFC 9110 §5.1); strictly, with no whitespace before its colon (RFC 9112 §5.1). */
const FIELD_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Where the head ends in `buf[from, to)` (the index after its blank line), or -1 while incomplete. */
export function headEnd(buf: Uint8Array, from: number, to: number): number {
  for (let i = from + 3; i < to; i++) {
    if (buf[i] === 10 && buf[i - 1] === 13 && buf[i - 2] === 10 && buf[i - 3] === 13) return i + 1;
  }
  return -1;
}

/**
 * The head in `bytes` (up to and including its blank line) of the answer to a request with a body (no HEAD),
 * read by `rules`. Throws Http1Failure on what those rules refuse.
 */
export function parseHead(bytes: Uint8Array, rules: HeadRules): ResponseHead {
  const lenient = rules === "lenient";
  const lines = headText(bytes).split("\r\n");
  const m = STATUS_LINE.exec(lines[0]!);
  if (!m) throw new Http1Failure("not an HTTP/1.x status line");
  const status = Number(m[2]);
  // A status under 100 is no interim head (RFC 9110 §15); leniently it is read past as one.
  if (status < 100 && !lenient) throw new Http1Failure(`status ${m[2]}`);
  const headers: [string, string][] = [];
  let length: string | undefined;
  let chunked = false;
  let close = m[1] === "0";
  /** Lenient: the framing fields' values, judged together once the head is read. */
  let lengths: string[] | undefined;
  let codings: string[] | undefined;
  // The head ends with two CRLFs: the last two split pieces are empty.
  for (let i = 1; i < lines.length - 2; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(":");
    const raw = lenient ? line.slice(0, colon).trimEnd() : line.slice(0, colon);
    const value = line.slice(colon + 1).trim();
    if (colon <= 0 || !FIELD_NAME.test(raw) || BAD_FIELD_BYTE.test(lenient ? value : line)) {
      throw new Http1Failure("malformed header line");
    }
    const name = raw.toLowerCase();
    headers.push([name, value]);
    if (name === "content-length") {
      if (lenient) (lengths ??= []).push(value);
      else length = strictLength(value, length);
    } else if (name === "transfer-encoding") {
      if (lenient) (codings ??= []).push(value);
      else chunked = strictChunked(value, chunked);
    } else if (name === "connection") {
      const tokens = value.toLowerCase().split(",").map((s) => s.trim());
      if (tokens.includes("close")) close = true;
    }
  }
  if (lenient) {
    // Transfer-Encoding present: Content-Length is not read (RFC 9112 §6.3).
    if (codings) chunked = lenientChunked(codings);
    else if (lengths && status >= 200) length = lenientLength(lengths);
  } else if (chunked && m[1] === "0") {
    // Transfer-Encoding in an HTTP/1.0 message: the framing is faulty (RFC 9112 §6.1), refused as fetch does.
    throw new Http1Failure("Transfer-Encoding in an HTTP/1.0 response");
  }
  const framing = bodyFraming(status, chunked, length);
  return {
    status,
    statusText: m[3] ?? "",
    headers,
    framing,
    keepAlive: !close && framing.kind !== "close" && !(chunked && (length ?? lengths) !== undefined),
  };
}
