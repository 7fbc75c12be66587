/**
 * An upstream request as the wire client writes it (RFC 9112 §3, §9.6): the head and body in one buffer, for
 * one write, and whether the request asks for its connection to be closed after the answer.
 */
import { type ByteAlloc, OWN_ARRAYS } from "../util/byte_slab.ts";

const encoder = new TextEncoder();
/** Header names and values go into the request as they are: no CR, LF or NUL may smuggle a line in. */
const UNSAFE = /[\r\n\0]/;
const USER_AGENT = `Deno/${Deno.version.deno}`;

/** The request's bytes: request line, Host, User-Agent, Accept, Content-Length, the given headers, the body;
 *  taken from `bytes` (the wire client's slab: util/byte_slab.ts). */
export function requestBytes(
  method: string,
  target: string,
  host: string,
  headers: Record<string, string>,
  body: Uint8Array,
  bytes: ByteAlloc = OWN_ARRAYS,
): Uint8Array {
  let head = `${method} ${target} HTTP/1.1\r\nhost: ${host}\r\nuser-agent: ${USER_AGENT}\r\naccept: */*\r\n` +
    `content-length: ${body.length}\r\n`;
  for (const name in headers) {
    const value = headers[name]!;
    if (UNSAFE.test(name) || UNSAFE.test(value) || name === "" || name.includes(":")) {
      throw new TypeError(`upstream header ${JSON.stringify(name)} is not a valid header`);
    }
    head += `${name}: ${value}\r\n`;
  }
  head += "\r\n";
  const out = bytes.take(head.length * 3 + body.length);
  const { written } = encoder.encodeInto(head, out);
  out.set(body, written);
  return bytes.keep(out, written + body.length);
}

/** The request says `Connection: close` (RFC 9112 §9.6): its connection is not reused. */
export function asksClose(headers: Record<string, string>): boolean {
  for (const name in headers) {
    if (
      name.length === 10 && name.toLowerCase() === "connection" &&
      /(^|,)\s*close\s*(,|$)/i.test(headers[name]!)
    ) {
      return true;
    }
  }
  return false;
}
