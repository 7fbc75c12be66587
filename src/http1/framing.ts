/**
 * How a response's body is delimited (RFC 9112 §6): by Content-Length, by chunked coding, by the end of the
 * connection, or not at all; and the rules for the two fields that decide it. The head parser (head.ts) reads
 * the fields and calls these; strict for the upstream client, lenient for the page fetch.
 */
import { Http1Failure } from "./failure.ts";

export type BodyFraming =
  | { kind: "none" }
  | { kind: "length"; length: number }
  | { kind: "chunked" }
  | { kind: "close" };

/** A length as Content-Length carries it: up to 15 digits (2^53 has 16), so the number is exact. */
const LENGTH = /^\d{1,15}$/;

/**
 * The body's framing (RFC 9112 §6.3, in its order): 1xx, 204 and 304 have none whatever the head says;
 * Transfer-Encoding chunked overrides Content-Length; with neither the body runs to the end of the connection.
 */
export function bodyFraming(status: number, chunked: boolean, length: string | undefined): BodyFraming {
  return status < 200 || status === 204 || status === 304
    ? { kind: "none" }
    : chunked
    ? { kind: "chunked" }
    : length !== undefined
    ? { kind: "length", length: Number(length) }
    : { kind: "close" };
}

/**
 * Strict: one Content-Length field's value, given the one seen before in the head (if any). Repeated identical
 * values are one length (RFC 9110 §8.6); a list, a non-number or a different value is refused.
 */
export function strictLength(value: string, before: string | undefined): string {
  if (!LENGTH.test(value) || (before !== undefined && before !== value)) {
    throw new Http1Failure("invalid Content-Length");
  }
  return value;
}

/**
 * Strict: one Transfer-Encoding field's value must be `chunked`, once in the head (RFC 9112 §6.1: chunked is
 * never applied twice; the client asks for no other coding).
 */
export function strictChunked(value: string, before: boolean): true {
  const codings = value.toLowerCase().split(",").map((s) => s.trim());
  if (codings[codings.length - 1] !== "chunked" || codings.length > 1 || before) {
    throw new Http1Failure(`unsupported Transfer-Encoding: ${value}`);
  }
  return true;
}

/**
 * Lenient: the length of every Content-Length field's values taken together (as Fetch's Headers joins them),
 * read only when no Transfer-Encoding came: the same number any number of times is that number, anything else
 * is refused.
 */
export function lenientLength(values: string[]): string {
  const distinct = new Set(values.flatMap((v) => v.split(",").map((s) => s.trim())));
  const [only] = distinct;
  if (distinct.size !== 1 || !LENGTH.test(only!)) throw new Http1Failure("invalid Content-Length");
  return only!;
}

/** Lenient: the Transfer-Encoding fields taken together end with chunked (a web server may send others first). */
export function lenientChunked(values: string[]): boolean {
  return values.join(", ").split(",").at(-1)!.trim().toLowerCase() === "chunked";
}
