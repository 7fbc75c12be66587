/**
 * PDF stream filters decoded under a byte budget (the pre-pass of pdf_streams.ts). Every stage's
 * output is charged to the budget as it is produced — before it is kept or handed to the next stage —
 * and decoding stops with file_limit_exceeded the moment the budget is spent, so a decompression bomb
 * costs the budget and a few 64 KiB chunks, never its inflated size. Stages are chained as push sinks;
 * each stage's output counts (pdf.js holds every stage's output too).
 *
 * The decoders follow pdf.js' own (flate_stream.js, lzw_stream.js, ascii_85_stream.js,
 * ascii_hex_stream.js, run_length_stream.js), not zlib: pdf.js falls back to its JavaScript inflater
 * whenever the runtime's zlib refuses a stream, and that inflater ignores the Adler-32 checksum and
 * anything after the last block, tolerates over-subscribed Huffman tables and reads distances before
 * the start as zeros — so zlib's count (which also drops a whole write's output on such errors) would
 * undercount exactly the streams an attacker would craft. Flate keeps only a 32 KiB window.
 *
 * A predictor is only counted, with pdf.js' row arithmetic (a full /Columns row of output for every
 * row of input, however short): it must be the last stage (pdf_streams.ts refuses anything after it).
 */
import { MiB } from "../limits.ts";
import { overLimit } from "./errors.ts";
import { isWhiteSpace } from "./pdf_syntax.ts";

export interface Budget {
  /** Bytes that may still be produced. */
  left: number;
  readonly total: number;
}

export type FilterKind = "flate" | "lzw" | "ahx" | "a85" | "rl";

export interface Stage {
  kind: FilterKind;
  /** LZW /EarlyChange (pdf.js default 1). */
  earlyChange?: number;
  /** /Predictor ≥ 2 after Flate or LZW: bytes per input row and per output row. */
  predictor?: { inRow: number; outRow: number };
}

/** Bytes charged since the last collection (see charge). */
let sinceGc = 0;
const gc = (globalThis as { gc?: () => void }).gc;

export function charge(budget: Budget, n: number): void {
  budget.left -= n;
  // Decoded chunks are garbage once counted, but V8 frees buffers lazily: the extraction process runs
  // with --expose-gc, and a full collection every 32 MiB keeps a bomb's refusal from holding the whole
  // budget in RSS.
  sinceGc += n;
  if (gc && sinceGc > 32 * MiB) {
    sinceGc = 0;
    gc();
  }
  if (budget.left < 0) {
    throw overLimit(
      `Сжатые потоки PDF распаковываются больше чем в ${Math.round(budget.total / MiB)} МиБ ` +
        "(бомба декомпрессии).",
    );
  }
}

interface Sink {
  push(chunk: Uint8Array): void;
  end(): void;
}

/**
 * Decodes `data` through `stages`, charging `budget`. With `keep`, returns the final output (used for
 * object streams); without it, or when the last stage has a predictor, returns null.
 */
export function decodeStages(
  data: Uint8Array,
  stages: Stage[],
  budget: Budget,
  keep: boolean,
): Uint8Array | null {
  const kept: Uint8Array[] = [];
  const last = stages.at(-1);
  const collect = keep && !last?.predictor;
  let sink: Sink = { push: (c) => collect && kept.push(c), end() {} };
  for (let i = stages.length - 1; i >= 0; i--) {
    const st = stages[i]!;
    if (st.predictor) sink = predictorSink(st.predictor, budget);
    sink = st.kind === "flate" ? flateSink(sink, budget) : decoderSink(decoderFor(st), sink, budget);
  }
  sink.push(data);
  sink.end();
  return collect ? concatChunks(kept) : null; // always a copy: never a view of the file
}

function predictorSink(p: { inRow: number; outRow: number }, budget: Budget): Sink {
  let carry = 0;
  return {
    push(c) {
      if (p.inRow <= 0 || p.outRow <= 0) return;
      carry += c.byteLength;
      const rows = Math.floor(carry / p.inRow);
      carry -= rows * p.inRow;
      charge(budget, rows * p.outRow);
    },
    end() {
      // a short last row still makes a full row (PNG rows need their tag byte and one more)
      if (p.outRow > 0 && carry > (p.inRow > p.outRow ? 1 : 0)) charge(budget, p.outRow);
    },
  };
}

const OUT_CHUNK = 64 * 1024;

/** Gathers a decoder's output in 64 KiB chunks, charging each before it goes to the next stage. */
class Out {
  #buf = new Uint8Array(OUT_CHUNK);
  #n = 0;
  constructor(private readonly budget: Budget, private readonly next: Sink) {}

  byte(b: number): void {
    if (this.#n === OUT_CHUNK) this.flush();
    this.#buf[this.#n++] = b;
  }
  fill(b: number, count: number): void {
    while (count > 0) {
      if (this.#n === OUT_CHUNK) this.flush();
      const k = Math.min(count, OUT_CHUNK - this.#n);
      this.#buf.fill(b, this.#n, this.#n + k);
      this.#n += k;
      count -= k;
    }
  }
  bytes(src: Uint8Array): void {
    let i = 0;
    while (i < src.byteLength) {
      if (this.#n === OUT_CHUNK) this.flush();
      const k = Math.min(src.byteLength - i, OUT_CHUNK - this.#n);
      this.#buf.set(src.subarray(i, i + k), this.#n);
      this.#n += k;
      i += k;
    }
  }
  flush(): void {
    if (this.#n === 0) return;
    charge(this.budget, this.#n);
    const chunk = this.#buf.subarray(0, this.#n);
    this.#buf = new Uint8Array(OUT_CHUNK);
    this.#n = 0;
    this.next.push(chunk);
  }
}

interface Decoder {
  done: boolean;
  push(chunk: Uint8Array, out: Out): void;
}

function decoderSink(dec: Decoder, next: Sink, budget: Budget): Sink {
  const out = new Out(budget, next);
  return {
    push(c) {
      if (!dec.done) dec.push(c, out);
    },
    end() {
      out.flush();
      next.end();
    },
  };
}

/** Flate needs its whole input (the raw data, or a previous stage's output — already charged). */
function flateSink(next: Sink, budget: Budget): Sink {
  const parts: Uint8Array[] = [];
  return {
    push(c) {
      parts.push(c);
    },
    end() {
      const out = new Out(budget, next);
      try {
        new Inflater(parts.length === 1 ? parts[0]! : concatChunks(parts), out).run();
      } catch (err) {
        if (!(err instanceof FlateError)) throw err; // damaged data: what came out before counts
      }
      out.flush();
      next.end();
    },
  };
}

function decoderFor(st: Stage): Decoder {
  switch (st.kind) {
    case "ahx":
      return new AsciiHex();
    case "a85":
      return new Ascii85();
    case "rl":
      return new RunLength();
    case "lzw":
      return new Lzw(st.earlyChange ?? 1);
  }
  throw new Error(`no decoder for ${st.kind}`);
}

class FlateError extends Error {}

const CODE_LEN_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];
/** (extra bits << 16) | base, as in pdf.js (the last three length codes all mean 258). */
const LENGTHS = [
  0x00003,
  0x00004,
  0x00005,
  0x00006,
  0x00007,
  0x00008,
  0x00009,
  0x0000a,
  0x1000b,
  0x1000d,
  0x1000f,
  0x10011,
  0x20013,
  0x20017,
  0x2001b,
  0x2001f,
  0x30023,
  0x3002b,
  0x30033,
  0x3003b,
  0x40043,
  0x40053,
  0x40063,
  0x40073,
  0x50083,
  0x500a3,
  0x500c3,
  0x500e3,
  0x00102,
  0x00102,
  0x00102,
];
const DISTS = [
  0x00001,
  0x00002,
  0x00003,
  0x00004,
  0x10005,
  0x10007,
  0x20009,
  0x2000d,
  0x30011,
  0x30019,
  0x40021,
  0x40031,
  0x50041,
  0x50061,
  0x60081,
  0x600c1,
  0x70101,
  0x70181,
  0x80201,
  0x80301,
  0x90401,
  0x90601,
  0xa0801,
  0xa0c01,
  0xb1001,
  0xb1801,
  0xc2001,
  0xc3001,
  0xd4001,
  0xd6001,
];

type Table = { codes: Int32Array; maxLen: number };

/** pdf.js' generateHuffmanTable: no completeness check; later codes overwrite earlier ones. */
function huffmanTable(lengths: ArrayLike<number>): Table {
  let maxLen = 0;
  for (let i = 0; i < lengths.length; i++) if (lengths[i]! > maxLen) maxLen = lengths[i]!;
  const size = 1 << maxLen;
  const codes = new Int32Array(size);
  for (let len = 1, code = 0, skip = 2; len <= maxLen; ++len, code <<= 1, skip <<= 1) {
    for (let val = 0; val < lengths.length; ++val) {
      if (lengths[val] !== len) continue;
      let rev = 0;
      for (let i = 0, t = code; i < len; ++i, t >>= 1) rev = (rev << 1) | (t & 1);
      for (let i = rev; i < size; i += skip) codes[i] = (len << 16) | val;
      ++code;
    }
  }
  return { codes, maxLen };
}

const FIXED_LIT = huffmanTable([
  ...Array(144).fill(8),
  ...Array(112).fill(9),
  ...Array(24).fill(7),
  ...Array(8).fill(8),
]);
const FIXED_DIST = huffmanTable(Array(30).fill(5));

/** Window kept for back-references, and the output buffer it slides in. */
const WINDOW = 32 * 1024;
const SLIDE_AT = 256 * 1024;

/** The inflate of pdf.js' FlateStream, counting instead of keeping: output goes to `out` in pieces. */
class Inflater {
  #p = 2;
  #codeBuf = 0;
  #codeSize = 0;
  #buf = new Uint8Array(SLIDE_AT + 258);
  #pos = 0;
  /** Bytes already slid out of #buf (absolute position of #buf[0]). */
  #base = 0;
  #emitted = 0;

  constructor(private readonly data: Uint8Array, private readonly out: Out) {}

  run(): void {
    const d = this.data;
    if (d.byteLength < 2) return;
    const cmf = d[0]!, flg = d[1]!;
    // pdf.js refuses these headers outright (and decodes nothing)
    if ((cmf & 0x0f) !== 0x08 || ((cmf << 8) + flg) % 31 !== 0 || flg & 0x20) return;
    try {
      let last = false;
      while (!last) {
        let hdr: number;
        try {
          hdr = this.#bits(3);
        } catch {
          return;
        }
        last = (hdr & 1) === 1;
        hdr >>= 1;
        if (hdr === 0) {
          if (!this.#stored()) return;
        } else if (hdr === 1) this.#block(FIXED_LIT, FIXED_DIST);
        else if (hdr === 2) this.#dynamic();
        else throw new FlateError("unknown block type");
      }
    } finally {
      this.#emit();
    }
  }

  #byte(): number {
    return this.#p < this.data.byteLength ? this.data[this.#p++]! : -1;
  }

  #bits(n: number): number {
    let buf = this.#codeBuf, size = this.#codeSize;
    while (size < n) {
      const b = this.#byte();
      if (b === -1) throw new FlateError("bad encoding");
      buf |= b << size;
      size += 8;
    }
    const v = buf & ((1 << n) - 1);
    this.#codeBuf = buf >> n;
    this.#codeSize = size - n;
    return v;
  }

  #code(t: Table): number {
    let buf = this.#codeBuf, size = this.#codeSize;
    while (size < t.maxLen) {
      const b = this.#byte();
      if (b === -1) break;
      buf |= b << size;
      size += 8;
    }
    const code = t.codes[buf & ((1 << t.maxLen) - 1)]!;
    const len = code >> 16;
    if (len < 1 || size < len) throw new FlateError("bad encoding");
    this.#codeBuf = buf >> len;
    this.#codeSize = size - len;
    return code & 0xffff;
  }

  /** An uncompressed block; false when the data ended inside its header (pdf.js ends the stream). */
  #stored(): boolean {
    const h = [this.#byte(), this.#byte(), this.#byte(), this.#byte()];
    if (h.includes(-1)) return false;
    const len = h[0]! | (h[1]! << 8), check = h[2]! | (h[3]! << 8);
    if (check !== (~len & 0xffff) && (len !== 0 || check !== 0)) throw new FlateError("bad stored block");
    this.#codeBuf = 0;
    this.#codeSize = 0;
    const start = this.#p, end = Math.min(this.data.byteLength, start + len);
    for (let i = start; i < end; i++) this.#put(this.data[i]!);
    this.#p = end;
    return end - start === len; // the data ended inside the block: pdf.js ends the stream there
  }

  #dynamic(): void {
    const numLit = this.#bits(5) + 257, numDist = this.#bits(5) + 1, numLenCodes = this.#bits(4) + 4;
    const lenLens = new Uint8Array(19);
    for (let i = 0; i < numLenCodes; i++) lenLens[CODE_LEN_ORDER[i]!] = this.#bits(3);
    const lenTable = huffmanTable(lenLens);
    const lengths = new Uint8Array(numLit + numDist);
    let i = 0, prev = 0;
    while (i < lengths.length) {
      const code = this.#code(lenTable);
      let repeat: number, what: number;
      if (code === 16) {
        repeat = this.#bits(2) + 3;
        what = prev;
      } else if (code === 17) {
        repeat = this.#bits(3) + 3;
        what = prev = 0;
      } else if (code === 18) {
        repeat = this.#bits(7) + 11;
        what = prev = 0;
      } else {
        lengths[i++] = prev = code;
        continue;
      }
      while (repeat-- > 0) lengths[i++] = what; // past the end: ignored, as in pdf.js' Uint8Array
    }
    this.#block(huffmanTable(lengths.subarray(0, numLit)), huffmanTable(lengths.subarray(numLit)));
  }

  #block(lit: Table, dist: Table): void {
    for (;;) {
      let c = this.#code(lit);
      if (c < 256) {
        this.#put(c);
        continue;
      }
      if (c === 256) return;
      c = LENGTHS[c - 257] ?? 0;
      const len = (c & 0xffff) + ((c >> 16) > 0 ? this.#bits(c >> 16) : 0);
      c = DISTS[this.#code(dist)] ?? 0; // codes 30 and 31: distance 0, as in pdf.js
      const d = (c & 0xffff) + ((c >> 16) > 0 ? this.#bits(c >> 16) : 0);
      this.#copy(d, len);
    }
  }

  /** A back-reference: `len` bytes from `d` back, overlapping copies repeating the pattern. */
  #copy(d: number, len: number): void {
    if (this.#pos + len > this.#buf.length) this.#slide();
    const buf = this.#buf, pos = this.#pos, from = pos - d;
    if (d === 0 || this.#base + from < 0) {
      // before the start (or distance 0): pdf.js reads a fresh buffer there, i.e. zeros
      for (let k = 0; k < len; k++) buf[pos + k] = this.#base + from + k < 0 || d === 0 ? 0 : buf[from + k]!;
    } else {
      let done = Math.min(d, len);
      buf.copyWithin(pos, from, from + done);
      while (done < len) {
        const n = Math.min(done, len - done); // `done` stays a multiple of d: the pattern lines up
        buf.copyWithin(pos + done, from, from + n);
        done += n;
      }
    }
    this.#pos = pos + len;
  }

  #put(b: number): void {
    if (this.#pos === this.#buf.length) this.#slide();
    this.#buf[this.#pos++] = b;
  }

  /** Hands the new bytes to `out` (which charges them) and keeps the last 32 KiB for back-references. */
  #slide(): void {
    this.#emit();
    const keep = Math.min(WINDOW, this.#pos);
    this.#buf.copyWithin(0, this.#pos - keep, this.#pos);
    this.#base += this.#pos - keep;
    this.#pos = keep;
    this.#emitted = keep;
  }

  #emit(): void {
    if (this.#pos > this.#emitted) this.out.bytes(this.#buf.subarray(this.#emitted, this.#pos));
    this.#emitted = this.#pos;
  }
}

/** pdf.js AsciiHexStream: hex digits, anything else skipped, `>` ends (an odd last digit is padded). */
class AsciiHex implements Decoder {
  done = false;
  #first = -1;
  push(c: Uint8Array, out: Out): void {
    for (const ch of c) {
      let d: number;
      if (ch >= 48 && ch <= 57) d = ch & 15;
      else if ((ch >= 65 && ch <= 70) || (ch >= 97 && ch <= 102)) d = (ch & 15) + 9;
      else if (ch === 62) {
        this.done = true;
        if (this.#first >= 0) out.byte(this.#first << 4);
        return;
      } else continue;
      if (this.#first < 0) this.#first = d;
      else {
        out.byte((this.#first << 4) | d);
        this.#first = -1;
      }
    }
  }
}

/** pdf.js Ascii85Stream: groups of five, `z` for four zeros, `~` ends, whitespace skipped. */
class Ascii85 implements Decoder {
  done = false;
  #g = new Uint8Array(5);
  #n = 0;
  push(c: Uint8Array, out: Out): void {
    for (const ch of c) {
      if (isWhiteSpace(ch)) continue;
      if (ch === 126) {
        this.#finish(out);
        return;
      }
      if (this.#n === 0 && ch === 122) {
        out.fill(0, 4);
        continue;
      }
      this.#g[this.#n++] = ch;
      if (this.#n === 5) {
        this.#emit(out, 4);
        this.#n = 0;
      }
    }
  }
  #finish(out: Out): void {
    if (this.#n > 0) {
      const n = this.#n;
      this.#g.fill(117, n, 5);
      this.#emit(out, n - 1);
    }
    this.done = true;
  }
  #emit(out: Out, count: number): void {
    let t = 0;
    for (let i = 0; i < 5; i++) t = t * 85 + (this.#g[i]! - 33);
    const b = [(t >>> 24) & 255, (t >>> 16) & 255, (t >>> 8) & 255, t & 255];
    for (let i = 0; i < count; i++) out.byte(b[i]!);
  }
}

/** pdf.js RunLengthStream: length byte n < 128 copies n+1 bytes, n > 128 repeats one 257−n times, 128 ends. */
class RunLength implements Decoder {
  done = false;
  #header = -1;
  #literal = 0;
  push(c: Uint8Array, out: Out): void {
    let i = 0;
    while (i < c.byteLength && !this.done) {
      if (this.#literal > 0) {
        const k = Math.min(this.#literal, c.byteLength - i);
        out.bytes(c.subarray(i, i + k));
        i += k;
        this.#literal -= k;
        continue;
      }
      const ch = c[i++]!;
      if (this.#header === -1) {
        if (ch === 128) this.done = true;
        else this.#header = ch;
        continue;
      }
      const n = this.#header;
      this.#header = -1;
      if (n < 128) {
        out.byte(ch);
        this.#literal = n;
      } else out.fill(ch, 257 - n);
    }
  }
}

/** pdf.js LZWStream: 9–12-bit codes, 256 clears, 257 ends, code length switched `earlyChange` early. */
class Lzw implements Decoder {
  done = false;
  #values = new Uint8Array(4096);
  #lengths = new Uint16Array(4096);
  #prevCodes = new Uint16Array(4096);
  #seq = new Uint8Array(4096);
  #seqLen = 0;
  #codeLength = 9;
  #nextCode = 258;
  #prevCode = 0;
  #cached = 0;
  #bits = 0;

  constructor(private readonly earlyChange: number) {
    for (let i = 0; i < 256; i++) {
      this.#values[i] = i;
      this.#lengths[i] = 1;
    }
  }

  push(c: Uint8Array, out: Out): void {
    for (const byte of c) {
      this.#cached = (this.#cached << 8) | byte;
      this.#bits += 8;
      while (this.#bits >= this.#codeLength) {
        this.#bits -= this.#codeLength;
        this.#code((this.#cached >>> this.#bits) & ((1 << this.#codeLength) - 1), out);
        if (this.done) return;
      }
    }
  }

  #code(code: number, out: Out): void {
    const seq = this.#seq;
    const hasPrev = this.#seqLen > 0;
    if (code < 256) {
      seq[0] = code;
      this.#seqLen = 1;
    } else if (code >= 258) {
      if (code < this.#nextCode) {
        this.#seqLen = this.#lengths[code]!;
        for (let j = this.#seqLen - 1, q = code; j >= 0; j--) {
          seq[j] = this.#values[q]!;
          q = this.#prevCodes[q]!;
        }
      } else seq[this.#seqLen++] = seq[0]!;
    } else if (code === 256) {
      this.#codeLength = 9;
      this.#nextCode = 258;
      this.#seqLen = 0;
      return;
    } else {
      this.done = true;
      return;
    }
    if (hasPrev) {
      const n = this.#nextCode;
      if (n < 4096) {
        this.#prevCodes[n] = this.#prevCode;
        this.#lengths[n] = this.#lengths[this.#prevCode]! + 1;
        this.#values[n] = seq[0]!;
      }
      this.#nextCode = n + 1;
      const x = this.#nextCode + this.earlyChange;
      if ((x & (x - 1)) === 0) this.#codeLength = Math.min(Math.log(x) / Math.LN2 + 1, 12) | 0;
    }
    this.#prevCode = code;
    for (let j = 0; j < this.#seqLen; j++) out.byte(j < 4096 ? seq[j]! : 0);
  }
}

function concatChunks(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.byteLength;
  }
  return out;
}
