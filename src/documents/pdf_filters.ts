/** pdf.js' small stream filters for the PDF pre-pass: ASCIIHex, ASCII85, RunLength and LZW, each a push decoder. */
import type { Decoder, Out } from "./pdf_budget.ts";
import { isWhiteSpace } from "./pdf_syntax.ts";

/** pdf.js AsciiHexStream: hex digits, anything else skipped, `>` ends (an odd last digit is padded). */
export class AsciiHex implements Decoder {
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
export class Ascii85 implements Decoder {
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
export class RunLength implements Decoder {
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
export class Lzw implements Decoder {
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
