/**
 * pdf.js' inflater (flate_stream.js) for the PDF pre-pass: the same tolerance of damaged data as pdf.js
 * (see pdf_decode.ts for why not zlib), counting instead of keeping — output goes to `Out` in pieces and
 * only a 32 KiB window is kept for back-references.
 */
import type { Out } from "./pdf_budget.ts";

export class FlateError extends Error {}

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
export class Inflater {
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
