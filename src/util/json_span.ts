/**
 * Where a top-level member's value sits in the bytes of a JSON object, so a field can be changed without
 * re-serialising the rest of a large body. No library gives byte offsets without building a whole tree
 * (jsonc-parser's parseTree would allocate a node per value of the prompt); this scan only skips.
 * The bytes must be valid JSON (they were parsed already); the last duplicate wins, as in JSON.parse.
 */

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

/** The span of top-level member `key`'s value, or undefined when the object has no such member. */
export function topLevelValueSpan(raw: Uint8Array, key: string): Span | undefined {
  let i = skipSpace(raw, 0);
  if (raw[i] !== OPEN_BRACE) throw new SyntaxError("not an object");
  i++;
  let found: Span | undefined;
  for (;;) {
    i = skipSpace(raw, i);
    if (raw[i] === CLOSE_BRACE) return found;
    if (raw[i] === COMMA) i = skipSpace(raw, i + 1);
    const keyEnd = skipString(raw, i);
    const name = JSON.parse(decoder.decode(raw.subarray(i, keyEnd))) as string;
    i = skipSpace(raw, keyEnd);
    if (raw[i] !== COLON) throw new SyntaxError("expected a colon");
    const start = skipSpace(raw, i + 1);
    i = skipValue(raw, start);
    if (name === key) found = { start, end: i };
  }
}

/** `raw` with the bytes in `span` replaced by `text`'s UTF-8. */
export function spliceBytes(raw: Uint8Array, span: Span, text: string): Uint8Array {
  const middle = new TextEncoder().encode(text);
  const out = new Uint8Array(raw.length - (span.end - span.start) + middle.length);
  out.set(raw.subarray(0, span.start), 0);
  out.set(middle, span.start);
  out.set(raw.subarray(span.end), span.start + middle.length);
  return out;
}
