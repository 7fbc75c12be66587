/**
 * Where a top-level member's value sits in the bytes of a JSON object, so a field can be changed without
 * re-serialising the rest of a large body. No library gives byte offsets without building a whole tree
 * (jsonc-parser's parseTree would allocate a node per value of the prompt); this scan only skips.
 * The bytes must be valid JSON (they were parsed already); the last duplicate wins, as in JSON.parse.
 */

import { concatBytes } from "./bytes.ts";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

export interface Span {
  /** Offset of the value's first byte. */
  start: number;
  /** Offset just past the value's last byte. */
  end: number;
}

const isSpace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

function skipSpace(raw: Uint8Array, i: number): number {
  while (i < raw.length && isSpace(raw[i]!)) i++;
  return i;
}

/** Offset just past the string starting at `i` (the opening quote); native indexOf jumps between quotes. */
function skipString(raw: Uint8Array, i: number): number {
  let at = i + 1;
  for (;;) {
    const q = raw.indexOf(QUOTE, at);
    if (q < 0) throw new SyntaxError("unterminated string");
    let slashes = 0;
    while (raw[q - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return q + 1;
    at = q + 1;
  }
}

/** Offset just past the value starting at `i`. */
function skipValue(raw: Uint8Array, i: number): number {
  const first = raw[i];
  if (first === QUOTE) return skipString(raw, i);
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    while (i < raw.length) {
      const b = raw[i]!;
      if (b === COMMA || b === CLOSE_BRACE || b === CLOSE_BRACKET || isSpace(b)) break;
      i++;
    }
    return i;
  }
  let depth = 0;
  while (i < raw.length) {
    const b = raw[i]!;
    if (b === QUOTE) {
      i = skipString(raw, i);
      continue;
    }
    if (b === OPEN_BRACE || b === OPEN_BRACKET) depth++;
    else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) return i + 1;
    }
    i++;
  }
  throw new SyntaxError("unterminated value");
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

/** A member name's text: a plain ASCII name (the usual one) read off the bytes, anything else through JSON. */
function keyName(raw: Uint8Array, start: number, end: number): string {
  let name = "";
  for (let i = start + 1; i < end - 1; i++) {
    const b = raw[i]!;
    if (b === BACKSLASH || b >= 0x80) return JSON.parse(decoder.decode(raw.subarray(start, end))) as string;
    name += String.fromCharCode(b);
  }
  return name;
}

/** Calls `fn` with each top-level member's name and value span, in order; returns the opening brace's offset. */
function eachMember(raw: Uint8Array, fn: (name: string, span: Span) => void): number {
  let i = skipSpace(raw, 0);
  if (raw[i] !== OPEN_BRACE) throw new SyntaxError("not an object");
  const brace = i++;
  for (;;) {
    i = skipSpace(raw, i);
    if (raw[i] === CLOSE_BRACE) return brace;
    if (raw[i] === COMMA) i = skipSpace(raw, i + 1);
    const keyEnd = skipString(raw, i);
    const name = keyName(raw, i, keyEnd);
    i = skipSpace(raw, keyEnd);
    if (raw[i] !== COLON) throw new SyntaxError("expected a colon");
    const start = skipSpace(raw, i + 1);
    i = skipValue(raw, start);
    fn(name, { start, end: i });
  }
}

/** The span of top-level member `key`'s value, or undefined when the object has no such member. */
export function topLevelValueSpan(raw: Uint8Array, key: string): Span | undefined {
  let found: Span | undefined;
  eachMember(raw, (name, span) => {
    if (name === key) found = span;
  });
  return found;
}

/**
 * `raw` with the top-level members in `changes` set to their values: a member's value replaced where it is, a
 * new member put right after the opening brace. `parsed` is what `raw` parses to: when no changed member is in
 * it, nothing needs finding and the bytes are not scanned. Undefined when a changed member appears twice in
 * `raw` (readers differ on which one counts) or a value is `undefined` (a removal).
 */
export function setMembers(
  raw: Uint8Array,
  parsed: Record<string, unknown>,
  changes: Record<string, unknown>,
): Uint8Array | undefined {
  const names = Object.keys(changes);
  const spans = new Map<string, Span>();
  let brace: number;
  if (names.some((name) => Object.hasOwn(parsed, name))) {
    let twice = false;
    brace = eachMember(raw, (name, span) => {
      if (!Object.hasOwn(changes, name)) return;
      if (spans.has(name)) twice = true;
      spans.set(name, span);
    });
    if (twice) return undefined;
  } else {
    brace = skipSpace(raw, 0);
    if (raw[brace] !== OPEN_BRACE) throw new SyntaxError("not an object");
  }
  const added: string[] = [];
  const edits: { span: Span; text: string }[] = [];
  for (const name of names) {
    const value = changes[name];
    if (value === undefined) return undefined;
    const span = spans.get(name);
    if (span) edits.push({ span, text: JSON.stringify(value) });
    else added.push(`${JSON.stringify(name)}:${JSON.stringify(value)}`);
  }
  if (added.length > 0) {
    const text = added.join(",") + (Object.keys(parsed).length > 0 ? "," : "");
    edits.push({ span: { start: brace + 1, end: brace + 1 }, text });
  }
  edits.sort((a, b) => a.span.start - b.span.start);
  const pieces: Uint8Array[] = [];
  let at = 0;
  for (const { span, text } of edits) {
    pieces.push(raw.subarray(at, span.start), encoder.encode(text));
    at = span.end;
  }
  pieces.push(raw.subarray(at));
  return concatBytes(pieces);
}

/** `raw` with the bytes in `span` replaced by `text`'s UTF-8. */
export function spliceBytes(raw: Uint8Array, span: Span, text: string): Uint8Array {
  const middle = encoder.encode(text);
  const out = new Uint8Array(raw.length - (span.end - span.start) + middle.length);
  out.set(raw.subarray(0, span.start), 0);
  out.set(middle, span.start);
  out.set(raw.subarray(span.end), span.start + middle.length);
  return out;
}
