/**
 * The client's bytes of a JSON object, read once (`scanObject`) and changed in place (`ObjectEdits`), so a few
 * top-level members can be set without re-serialising a large prompt. No library gives byte offsets without
 * building a whole tree (jsonc-parser's parseTree would allocate a node per value of the prompt); this scan
 * only skips. The bytes must be valid JSON (they were parsed already).
 *
 * The same pass counts the text's members: each has exactly one `:` outside strings, and no other `:` is
 * outside them. JSON.parse keeps one member per name and object, the last, so the text names a member twice in
 * some object exactly when it holds more members than the parsed value kept (json_depth.ts
 * `membersWithinDepth`). An upstream's parser may keep the first instead, so the client's bytes go upstream
 * only without a repeat (engine/generate.ts `nativeBody`): otherwise the upstream could run another model, a
 * longer prompt or a larger output budget than the gateway checked, estimated and held for.
 *
 * It also tells whether any name is written with an escape: Deno 2.9's JSON.parse can misread such a name
 * (docs/api.md "Request bodies on the native path"), so those bytes do not go upstream either.
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
/** A string's first bytes are looked at one by one: a member name ends sooner than a native `indexOf` call. */
const SHORT_STRING = 24;

export interface Span {
  /** Offset of the value's first byte. */
  start: number;
  /** Offset just past the value's last byte. */
  end: number;
}

export interface ObjectScan {
  /** Members of every object in the text, at any depth: one per `:` outside strings. */
  members: number;
  /** Whether a member's name, at any depth, is written with an escape (a backslash in its bytes). */
  escapedNames: boolean;
  /** Offset of the opening brace. */
  brace: number;
  /** Each top-level member's value, by its name as JSON.parse reads it (the last of a repeated name). */
  spans: Map<string, Span>;
}

const isSpace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

function skipSpace(raw: Uint8Array, i: number): number {
  while (i < raw.length && isSpace(raw[i]!)) i++;
  return i;
}

/** Offset just past a string whose first quote after the opening one is at `q` (-1: none), escaped ones skipped. */
function stringEnd(raw: Uint8Array, q: number): number {
  for (;;) {
    if (q < 0) throw new SyntaxError("unterminated string");
    // A quote after an odd run of backslashes is escaped; the run cannot pass the opening quote.
    let slashes = 0;
    while (raw[q - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return q + 1;
    q = raw.indexOf(QUOTE, q + 1);
  }
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

/** One pass over the bytes of a JSON object: its members counted, its top-level members' values located. */
export function scanObject(raw: Uint8Array): ObjectScan {
  let i = skipSpace(raw, 0);
  if (raw[i] !== OPEN_BRACE) throw new SyntaxError("not an object");
  const brace = i++;
  const spans = new Map<string, Span>();
  let members = 0;
  let escapedNames = false;
  let depth = 1;
  // The last string's bytes (before a `:`, a member's name), and the top-level member being read.
  let lastString = 0;
  let lastEnd = 0;
  let name = "";
  let valueStart = -1;
  while (i < raw.length) {
    const b = raw[i]!;
    if (b === QUOTE) {
      // Its first bytes one by one, past them native indexOf: a name ends sooner than the call.
      let q = i + 1;
      const stop = Math.min(raw.length, q + SHORT_STRING);
      while (q < stop && raw[q] !== QUOTE) q++;
      if (q === stop) q = raw.indexOf(QUOTE, q);
      const end = stringEnd(raw, q);
      if (depth === 1 && i === valueStart) spans.set(name, { start: i, end });
      lastString = i;
      lastEnd = end;
      i = end;
      continue;
    }
    if (b === COLON) {
      members++;
      for (let k = lastString + 1; k < lastEnd && !escapedNames; k++) escapedNames = raw[k] === BACKSLASH;
      if (depth === 1) {
        name = keyName(raw, lastString, lastEnd);
        valueStart = i = skipSpace(raw, i + 1);
        const v = raw[i];
        if (v !== QUOTE && v !== OPEN_BRACE && v !== OPEN_BRACKET) {
          // A number, true, false or null: it ends at the first byte no literal has.
          while (i < raw.length) {
            const c = raw[i]!;
            if (c === COMMA || c === CLOSE_BRACE || isSpace(c)) break;
            i++;
          }
          spans.set(name, { start: valueStart, end: i });
        }
        continue;
      }
    } else if (b === OPEN_BRACE || b === OPEN_BRACKET) depth++;
    else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) {
      depth--;
      if (depth === 1) spans.set(name, { start: valueStart, end: i + 1 });
      else if (depth === 0) return { members, escapedNames, brace, spans };
    }
    i++;
  }
  throw new SyntaxError("unterminated object");
}

/**
 * Changes to the bytes of a JSON object whose names are unique (scanned by `scanObject`): top-level values
 * replaced where they are, bytes put inside one, members added right after the opening brace.
 */
export class ObjectEdits {
  readonly #raw: Uint8Array;
  readonly #scan: ObjectScan;
  readonly #edits: { span: Span; text: string }[] = [];
  readonly #added: string[] = [];

  constructor(raw: Uint8Array, scan: ObjectScan) {
    this.#raw = raw;
    this.#scan = scan;
  }

  /** Where top-level member `name`'s value is in the original bytes. */
  span(name: string): Span | undefined {
    return this.#scan.spans.get(name);
  }

  /** The original bytes of `span` as text. */
  text(span: Span): string {
    return decoder.decode(this.#raw.subarray(span.start, span.end));
  }

  /** Top-level member `name` set to `value` (JSON): replaced where it is, or added (`first`: before the others). */
  set(name: string, value: unknown, first = false): void {
    const span = this.span(name);
    const json = JSON.stringify(value);
    if (span) this.replace(span, json);
    else if (first) this.#added.unshift(`${JSON.stringify(name)}:${json}`);
    else this.#added.push(`${JSON.stringify(name)}:${json}`);
  }

  /** The original bytes in `span` replaced by `text` (an empty span: `text` put there). Spans must not overlap. */
  replace(span: Span, text: string): void {
    this.#edits.push({ span, text });
  }

  /** The bytes with every change; the original bytes themselves when there is none. */
  bytes(): Uint8Array {
    const edits = [...this.#edits];
    if (this.#added.length > 0) {
      const at = this.#scan.brace + 1;
      const text = this.#added.join(",") + (this.#scan.spans.size > 0 ? "," : "");
      edits.push({ span: { start: at, end: at }, text });
    }
    if (edits.length === 0) return this.#raw;
    edits.sort((a, b) => a.span.start - b.span.start);
    const pieces: Uint8Array[] = [];
    let at = 0;
    for (const { span, text } of edits) {
      if (span.start < at) throw new Error("overlapping edits of a JSON object's bytes");
      pieces.push(this.#raw.subarray(at, span.start), encoder.encode(text));
      at = span.end;
    }
    pieces.push(this.#raw.subarray(at));
    return concatBytes(pieces);
  }
}
