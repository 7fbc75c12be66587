/**
 * Length-prefixed frames over a pipe (the extraction process's stdin and stdout): a JSON header and a
 * binary body, each preceded by its length as a 32-bit little-endian integer. Bodies carry the file
 * (to the process) and each section's text as UTF-8 (from it), so the gateway never parses one big
 * JSON document: it decodes one section at a time.
 */

const enc = new TextEncoder();
const dec = new TextDecoder();

export function encodeFrame(header: unknown, body: Uint8Array = new Uint8Array(0)): Uint8Array {
  const h = enc.encode(JSON.stringify(header));
  const out = new Uint8Array(8 + h.byteLength + body.byteLength);
  const view = new DataView(out.buffer);
  view.setUint32(0, h.byteLength, true);
  out.set(h, 4);
  view.setUint32(4 + h.byteLength, body.byteLength, true);
  out.set(body, 8 + h.byteLength);
  return out;
}

export interface Frame {
  header: Record<string, unknown>;
  body: Uint8Array;
}

export class FrameTooLarge extends Error {}

export class FrameReader {
  #chunks: Uint8Array[] = [];
  #have = 0;
  /** `maxBody`: a longer body is refused before it is buffered (the other side may be hostile). */
  constructor(
    private readonly reader: ReadableStreamDefaultReader<Uint8Array>,
    private readonly maxBody = 64 * 1024 * 1024,
  ) {}

  /** The next frame, or null when the stream ended (a partial frame counts as ended). */
  async read(): Promise<Frame | null> {
    if (!await this.#fill(4)) return null;
    const hLen = this.#u32();
    if (hLen > 64 * 1024) throw new FrameTooLarge(`frame header of ${hLen} bytes`);
    if (!await this.#fill(hLen + 4)) return null;
    const header = JSON.parse(dec.decode(this.#take(hLen)));
    const bLen = this.#u32();
    if (bLen > this.maxBody) throw new FrameTooLarge(`frame body of ${bLen} bytes`);
    if (!await this.#fill(bLen)) return null;
    return { header, body: this.#take(bLen) };
  }

  async #fill(n: number): Promise<boolean> {
    while (this.#have < n) {
      const { done, value } = await this.reader.read();
      if (done) return false;
      this.#chunks.push(value);
      this.#have += value.byteLength;
    }
    return true;
  }

  #u32(): number {
    const b = this.#take(4);
    return new DataView(b.buffer, b.byteOffset, 4).getUint32(0, true);
  }

  #take(n: number): Uint8Array {
    const first = this.#chunks[0];
    let out: Uint8Array;
    if (first && first.byteLength >= n) {
      out = first.subarray(0, n);
      if (first.byteLength === n) this.#chunks.shift();
      else this.#chunks[0] = first.subarray(n);
    } else {
      out = new Uint8Array(n);
      let off = 0;
      while (off < n) {
        const c = this.#chunks[0]!;
        const k = Math.min(c.byteLength, n - off);
        out.set(c.subarray(0, k), off);
        off += k;
        if (k === c.byteLength) this.#chunks.shift();
        else this.#chunks[0] = c.subarray(k);
      }
    }
    this.#have -= n;
    return out;
  }
}
