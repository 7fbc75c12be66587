/**
 * Every object and stream of a PDF, found the way an attacker cannot hide them from pdf.js: not by
 * following the xref (pdf.js may read an object wherever an xref offset points, even inside another
 * stream's data, and rebuilds a broken xref by scanning), but by parsing a value after EVERY `obj`
 * keyword in the file, plus after every `trailer`. Objects of object streams are added by
 * pdf_streams.ts once their stream is decoded (addObjectStream). Lexing work is bounded: at most
 * `lexBudget` bytes are read over all candidates (overlapping candidates cannot go quadratic).
 */
import { overLimit } from "./errors.ts";
import { type Dict, EOF, Lexer, Parser, PdfSyntaxError, Ref, Stream, type Value } from "./pdf_syntax.ts";

export class PdfObjects {
  /** Every definition seen per object number (incremental updates and hidden copies included). */
  readonly defs = new Map<number, Value[]>();
  readonly streams: Stream[] = [];
  /** The dictionaries `keepDict` asked for (not all of them: a file may hold millions). */
  readonly dicts: Dict[] = [];
  readonly trailers: Dict[] = [];
  #seen = new Set<string>();
  #bufIds = new Map<Uint8Array, number>();

  constructor(private lexLeft: number, private readonly keepDict: (d: Dict) => boolean) {}

  /** Parses one value at `at` (object `num`, when known) and records what it contains. */
  parseValue(buf: Uint8Array, at: number, end: number, num: number | undefined): Value {
    const lexer = new Lexer(buf, at, end);
    let value: Value = EOF;
    let failure: unknown;
    try {
      const parser = new Parser(
        lexer,
        (d) => this.keepDict(d) && this.dicts.push(d),
        (s) => this.#addStream(s),
      );
      value = parser.getObj();
    } catch (err) {
      // A syntax error only means nothing usable starts here (pdf.js would fail there too).
      // (InlineImageInObject and NestingTooDeep are not syntax errors: they refuse the document.)
      if (!(err instanceof PdfSyntaxError || err instanceof RangeError)) failure = err;
    }
    this.lexLeft -= Math.max(0, lexer.pos - at);
    if (this.lexLeft < 0) throw overLimit("Структура PDF слишком сложна для проверки.");
    if (failure !== undefined) throw failure;
    if (value instanceof Stream && num !== undefined) value.num ??= num;
    if (num !== undefined && value !== EOF) {
      const list = this.defs.get(num);
      if (list) list.push(value);
      else this.defs.set(num, [value]);
    }
    return value;
  }

  #addStream(s: Stream): void {
    let id = this.#bufIds.get(s.buf);
    if (id === undefined) this.#bufIds.set(s.buf, id = this.#bufIds.size);
    const key = `${id}:${s.start}`;
    if (this.#seen.has(key)) return;
    this.#seen.add(key);
    this.streams.push(s);
  }

  /** Every value a reference may stand for (empty when the object is nowhere to be found). */
  resolve(v: Value | undefined): Value[] {
    if (v instanceof Ref) return this.defs.get(v.num) ?? [];
    return v === undefined ? [] : [v];
  }
}

const SPECIAL_BEFORE = (c: number | undefined) =>
  c === undefined || (c >= 48 && c <= 57) || [0, 9, 10, 12, 13, 32, 37, 40, 41, 47, 60, 62, 91, 93, 123, 125]
    .includes(c);

/** Reads `<num> <gen>` backwards from just before `obj` at `i`; undefined when not there. */
function objectNumber(buf: Uint8Array, i: number): number | undefined {
  let p = i - 1;
  const ws = () => {
    while (p >= 0 && [0, 9, 10, 12, 13, 32].includes(buf[p]!)) p--;
  };
  const digits = (): number | undefined => {
    const end = p;
    while (p >= 0 && buf[p]! >= 48 && buf[p]! <= 57) p--;
    if (p === end || end - p > 10) return undefined;
    return Number(String.fromCharCode(...buf.subarray(p + 1, end + 1)));
  };
  ws();
  if (digits() === undefined) return undefined;
  ws();
  return digits();
}

/** Scans the whole file: a value after every `obj`, a dictionary after every `trailer`. */
export function scanPdf(bytes: Uint8Array, lexBudget: number, keepDict: (d: Dict) => boolean): PdfObjects {
  const objs = new PdfObjects(lexBudget, keepDict);
  // windows-1252 keeps one UTF-16 unit per byte, so string offsets are byte offsets.
  const text = new TextDecoder("latin1").decode(bytes);
  const isEnd = (c: number | undefined) =>
    c === undefined || [0, 9, 10, 12, 13, 32, 37, 40, 41, 47, 60, 62, 91, 93, 123, 125].includes(c);
  for (let i = text.indexOf("obj"); i !== -1; i = text.indexOf("obj", i + 3)) {
    if (!SPECIAL_BEFORE(bytes[i - 1]) || !isEnd(bytes[i + 3])) continue;
    objs.parseValue(bytes, i + 3, bytes.byteLength, objectNumber(bytes, i));
  }
  for (let i = text.indexOf("trailer"); i !== -1; i = text.indexOf("trailer", i + 7)) {
    if (!isEnd(bytes[i + 7])) continue;
    const v = objs.parseValue(bytes, i + 7, bytes.byteLength, undefined);
    if (v instanceof Map) objs.trailers.push(v);
  }
  return objs;
}

/**
 * Adds the objects of a decoded object stream, the way pdf.js reads them: /N pairs of (number,
 * offset) from the start, then each object parsed from /First + offset up to the next offset. A
 * table pdf.js would reject (not integers, offsets going back) adds nothing.
 */
export function addObjectStream(objs: PdfObjects, data: Uint8Array, first: number, n: number): void {
  if (!Number.isInteger(first) || !Number.isInteger(n) || first < 0 || n <= 0) return;
  const nums: number[] = [];
  const offsets: number[] = [];
  const lexer = new Lexer(data, 0);
  try {
    for (let i = 0; i < n; i++) {
      const num = lexer.getObj();
      const off = lexer.getObj();
      if (!Number.isInteger(num) || !Number.isInteger(off)) return;
      nums.push(num as number);
      offsets.push(off as number);
    }
  } catch {
    return;
  }
  for (let i = 0; i < nums.length; i++) {
    const next = offsets[i + 1];
    if (next !== undefined && next < offsets[i]!) return;
    const at = first + offsets[i]!;
    if (at < 0 || at > data.byteLength) continue;
    const end = next === undefined ? data.byteLength : Math.min(data.byteLength, first + next);
    objs.parseValue(data, at, end, nums[i]);
  }
}
