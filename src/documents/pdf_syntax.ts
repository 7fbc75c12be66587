/**
 * PDF tokens and objects read the way pdf.js (the engine inside unpdf) reads them: the same whitespace
 * and delimiter classes, `#xx` name escapes with pdf.js' recovery, literal and hex strings, comments,
 * `n g R` references, a dictionary followed by `stream` becoming a stream at any depth, the EOL rule
 * after `stream` (everything up to CR, LF or CRLF is skipped, so a bare CR works) and the `endstream`
 * search when /Length does not land on `endstream`.
 *
 * Hand-written on purpose, for the decompression pre-pass (pdf_streams.ts): it must agree with pdf.js
 * byte for byte on where a stream's data starts and which filters apply, and the PDF library we have
 * (pdf-lib) does not — it takes `stream` followed by spaces as the start of the data, decodes only
 * upper-case `#XX`, ignores the /F and /DP abbreviations pdf.js honours, and parses objects in file
 * order, so an object hidden inside another stream's data (which pdf.js reads when the xref points
 * there) is never seen. String contents are skipped, not kept: filters are names.
 */

export class Name {
  constructor(readonly name: string) {}
}
export class Ref {
  constructor(readonly num: number, readonly gen: number) {}
}
export class Cmd {
  constructor(readonly cmd: string) {}
}
/** A string object; its bytes are never needed. */
export const STRING = Object.freeze({ string: true });
export const EOF = Object.freeze({ eof: true });
export type Dict = Map<string, Value>;

/** A stream: its dictionary and where its data lies in `buf` (the file, or a decoded object stream). */
export class Stream {
  /** Object number when known (from `n g obj`, or an object stream's table). */
  num: number | undefined;
  constructor(
    readonly dict: Dict,
    readonly buf: Uint8Array,
    /** First data byte (after the EOL that follows `stream`). */
    readonly start: number,
    /** End found by searching for `endstream` from `start`, or -1 (pdf.js then refuses the object). */
    readonly searchEnd: number,
  ) {}
}

export type Value =
  | number
  | boolean
  | null
  | Name
  | Ref
  | Cmd
  | Value[]
  | Dict
  | Stream
  | typeof STRING
  | typeof EOF;

export class PdfSyntaxError extends Error {}

/** `BI` where an object is expected: pdf.js would make an inline image stream of it. Never skipped. */
export class InlineImageInObject extends Error {}

/** Deeper than MAX_DEPTH: pdf.js would still parse it (and any stream inside). Never skipped. */
export class NestingTooDeep extends Error {}

/** 1 = whitespace, 2 = delimiter (pdf.js' table). */
const SPECIAL = new Uint8Array(256);
for (const c of [0, 9, 10, 12, 13, 32]) SPECIAL[c] = 1;
for (const c of [37, 40, 41, 47, 60, 62, 91, 93, 123, 125]) SPECIAL[c] = 2;

/** pdf.js' isWhiteSpace (narrower than SPECIAL = 1: no NUL, no form feed). */
export function isWhiteSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 13 || c === 10;
}

function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c & 15;
  if ((c >= 65 && c <= 70) || (c >= 97 && c <= 102)) return (c & 15) + 9;
  return -1;
}

const CMDS = new Map<string, Cmd>();
function cmd(s: string): Cmd {
  let c = CMDS.get(s);
  if (!c) {
    c = new Cmd(s);
    if (CMDS.size < 1000) CMDS.set(s, c);
  }
  return c;
}
export const isCmd = (v: unknown, s: string): boolean => v instanceof Cmd && v.cmd === s;

/** Maximum nesting of arrays and dictionaries; deeper is refused (real files stay far below). */
export const MAX_DEPTH = 64;

export class Lexer {
  /** Index of the current character (pdf.js' `currentChar`). */
  pos: number;
  constructor(readonly buf: Uint8Array, start: number, readonly end: number = buf.byteLength) {
    this.pos = start;
  }

  cur(): number {
    return this.pos < this.end ? this.buf[this.pos]! : -1;
  }
  next(): number {
    if (this.pos < this.end) this.pos++;
    return this.cur();
  }
  peek(): number {
    return this.pos + 1 < this.end ? this.buf[this.pos + 1]! : -1;
  }

  getObj(): Value {
    let comment = false;
    let ch = this.cur();
    for (;;) {
      if (ch < 0) return EOF;
      if (comment) {
        if (ch === 10 || ch === 13) comment = false;
      } else if (ch === 37) comment = true;
      else if (SPECIAL[ch] !== 1) break;
      ch = this.next();
    }
    switch (ch) {
      case 48:
      case 49:
      case 50:
      case 51:
      case 52:
      case 53:
      case 54:
      case 55:
      case 56:
      case 57:
      case 43:
      case 45:
      case 46:
        return this.getNumber();
      case 40:
        return this.skipString();
      case 47:
        return this.getName();
      case 91:
        this.next();
        return cmd("[");
      case 93:
        this.next();
        return cmd("]");
      case 60:
        if (this.next() === 60) {
          this.next();
          return cmd("<<");
        }
        return this.skipHexString();
      case 62:
        if (this.next() === 62) {
          this.next();
          return cmd(">>");
        }
        return cmd(">");
      case 123:
        this.next();
        return cmd("{");
      case 125:
        this.next();
        return cmd("}");
      case 41:
        this.next();
        throw new PdfSyntaxError("illegal character )");
    }
    let s = String.fromCharCode(ch);
    if (ch < 32 || ch > 127) {
      const p = this.peek();
      if (p >= 32 && p <= 127) {
        this.next();
        return cmd(s);
      }
    }
    while ((ch = this.next()) >= 0 && !SPECIAL[ch]) {
      if (s.length === 128) throw new PdfSyntaxError("command token too long");
      s += String.fromCharCode(ch);
    }
    if (s === "true") return true;
    if (s === "false") return false;
    if (s === "null") return null;
    return cmd(s);
  }

  getNumber(): number {
    let ch = this.cur();
    let divideBy = 0;
    let sign = 1;
    if (ch === 45) {
      sign = -1;
      ch = this.next();
      if (ch === 45) ch = this.next();
    } else if (ch === 43) ch = this.next();
    while (ch === 10 || ch === 13) ch = this.next();
    if (ch === 46) {
      divideBy = 10;
      ch = this.next();
    }
    if (ch < 48 || ch > 57) {
      if (isWhiteSpace(ch) || ch === 40 || ch === 60 || ch === -1) return 0;
      throw new PdfSyntaxError("invalid number");
    }
    let value = ch - 48;
    while ((ch = this.next()) >= 0) {
      if (ch >= 48 && ch <= 57) {
        if (divideBy !== 0) divideBy *= 10;
        value = value * 10 + (ch - 48);
      } else if (ch === 46) {
        if (divideBy === 0) divideBy = 1;
        else break;
      } else if (ch !== 45) break; // pdf.js ignores a minus sign in the middle
    }
    if (divideBy !== 0) value /= divideBy;
    return sign * value;
  }

  /** Literal string: balanced parentheses, backslash escapes; the content is not kept. */
  skipString(): typeof STRING {
    let depth = 1;
    let ch = this.next();
    for (;;) {
      if (ch < 0) return STRING; // unterminated: pdf.js stops at the end too
      if (ch === 40) depth++;
      else if (ch === 41) {
        if (--depth === 0) {
          this.next();
          return STRING;
        }
      } else if (ch === 92) {
        ch = this.next();
        if (ch < 0) return STRING;
        if (ch >= 48 && ch <= 55) {
          // up to three octal digits; the character after them is looked at again
          ch = this.next();
          if (ch >= 48 && ch <= 55) {
            ch = this.next();
            if (ch >= 48 && ch <= 55) ch = this.next();
          }
          continue;
        }
        if (ch === 13 && this.peek() === 10) this.next();
      }
      ch = this.next();
    }
  }

  skipHexString(): typeof STRING {
    let ch = this.cur();
    while (ch >= 0 && ch !== 62) ch = this.next();
    if (ch === 62) this.next();
    return STRING;
  }

  getName(): Name {
    let out = "";
    let ch: number;
    while ((ch = this.next()) >= 0 && !SPECIAL[ch]) {
      if (ch === 35) {
        ch = this.next();
        if (ch < 0 || SPECIAL[ch]) {
          out += "#";
          break;
        }
        const x = hexDigit(ch);
        if (x !== -1) {
          const first = ch;
          ch = this.next();
          const y = hexDigit(ch);
          if (y === -1) {
            out += "#" + String.fromCharCode(first);
            if (ch < 0 || SPECIAL[ch]) break;
            out += String.fromCharCode(ch);
            continue;
          }
          out += String.fromCharCode((x << 4) | y);
        } else out += "#" + String.fromCharCode(ch);
      } else out += String.fromCharCode(ch);
    }
    return new Name(out);
  }

  /** pdf.js' skipToNextLine: from the current character through the next CR, LF or CRLF. */
  skipToNextLine(): void {
    let ch = this.cur();
    while (ch >= 0) {
      if (ch === 13) {
        if (this.next() === 10) this.next();
        return;
      }
      if (ch === 10) {
        this.next();
        return;
      }
      ch = this.next();
    }
  }
}

const ENDSTREAM = [0x65, 0x6e, 0x64]; // "end"
const STREAM_WORDS = [[0x73, 0x74, 0x72, 0x65, 0x61, 0x6d], [0x73, 0x74, 0x65, 0x61, 0x6d], [
  0x73,
  0x74,
  0x72,
  0x65,
  0x61,
]];

/**
 * pdf.js' findStreamLength: the first `endstream` (or the misspellings `endsteam`, `endstrea` followed
 * by whitespace) at or after `from`; returns its offset, or -1.
 */
export function findEndstream(buf: Uint8Array, from: number, end: number): number {
  for (let i = buf.indexOf(0x65, from); i !== -1 && i + 9 <= end; i = buf.indexOf(0x65, i + 1)) {
    if (buf[i + 1] !== ENDSTREAM[1] || buf[i + 2] !== ENDSTREAM[2]) continue;
    for (const w of STREAM_WORDS) {
      let k = 0;
      while (k < w.length && buf[i + 3 + k] === w[k]) k++;
      if (k >= 6) return i;
      if (k === w.length) {
        const after = buf[i + 3 + k];
        if (after !== undefined && isWhiteSpace(after)) return i;
        break;
      }
    }
  }
  return -1;
}

/**
 * pdf.js' Parser.getObj with two tokens of look-ahead, always allowing streams. `onDict` sees every
 * dictionary (stream dictionaries included) as it is completed; `onStream` every stream.
 */
export class Parser {
  buf1: Value;
  buf2: Value;
  depth = 0;

  constructor(
    readonly lexer: Lexer,
    readonly onDict: (d: Dict) => void = () => {},
    readonly onStream: (s: Stream) => void = () => {},
  ) {
    this.buf1 = lexer.getObj();
    this.buf2 = lexer.getObj();
  }

  shift(): void {
    this.buf1 = this.buf2;
    this.buf2 = this.lexer.getObj();
  }

  getObj(): Value {
    const t = this.buf1;
    this.shift();
    if (t instanceof Cmd) {
      if (t.cmd === "[") return this.nested(() => this.array());
      if (t.cmd === "<<") return this.nested(() => this.dict());
      // pdf.js turns `BI … ID … EI` into a (filtered) stream wherever it parses an object.
      if (t.cmd === "BI") throw new InlineImageInObject();
      return t;
    }
    if (
      typeof t === "number" && Number.isInteger(t) && Number.isInteger(this.buf1) && isCmd(this.buf2, "R")
    ) {
      const ref = new Ref(t, this.buf1 as number);
      this.shift();
      this.shift();
      return ref;
    }
    return t;
  }

  private nested<T>(fn: () => T): T {
    if (++this.depth > MAX_DEPTH) throw new NestingTooDeep();
    try {
      return fn();
    } finally {
      this.depth--;
    }
  }

  private array(): Value[] {
    const out: Value[] = [];
    while (!isCmd(this.buf1, "]") && this.buf1 !== EOF) out.push(this.getObj());
    if (this.buf1 === EOF) throw new PdfSyntaxError("end of data inside an array");
    this.shift();
    return out;
  }

  private dict(): Dict | Stream {
    const d: Dict = new Map();
    while (!isCmd(this.buf1, ">>") && this.buf1 !== EOF) {
      if (!(this.buf1 instanceof Name)) {
        this.shift();
        continue;
      }
      const key = this.buf1.name;
      this.shift();
      if ((this.buf1 as Value) === EOF) break;
      d.set(key, this.getObj());
    }
    if (this.buf1 === EOF) throw new PdfSyntaxError("end of data inside a dictionary");
    this.onDict(d);
    if (isCmd(this.buf2, "stream")) return this.stream(d);
    this.shift();
    return d;
  }

  /**
   * The lexer stands on the character after `stream`. Data starts after the next EOL; parsing goes on
   * after `endstream`, found the way pdf.js does (direct /Length first, else the search).
   */
  private stream(dict: Dict): Stream {
    const lx = this.lexer;
    lx.skipToNextLine();
    const start = lx.pos;
    const searchEnd = findEndstream(lx.buf, start, lx.end);
    const s = new Stream(dict, lx.buf, start, searchEnd);
    let resume = -1;
    const length = dict.get("Length");
    if (typeof length === "number" && Number.isInteger(length) && length >= 0 && start + length <= lx.end) {
      const probe = new Lexer(lx.buf, start + length, lx.end);
      try {
        if (isCmd(probe.getObj(), "endstream")) resume = probe.pos;
      } catch { /* not endstream */ }
    }
    if (resume === -1 && searchEnd !== -1) {
      const probe = new Lexer(lx.buf, searchEnd, lx.end);
      probe.getObj(); // the (possibly misspelled) endstream command
      resume = probe.pos;
    }
    if (resume === -1) resume = lx.end;
    lx.pos = Math.min(resume, lx.end);
    this.buf1 = lx.getObj();
    this.buf2 = lx.getObj();
    this.onStream(s);
    return s;
  }
}
