/**
 * The byte budget of the PDF pre-pass (pdf_decode.ts) and the output buffer every decoder writes to:
 * each 64 KiB chunk is charged to the budget before it goes to the next stage, so decoding stops with
 * file_limit_exceeded the moment the budget is spent.
 */
import { MiB } from "./limits.ts";
import { overLimit } from "./errors.ts";

export interface Budget {
  /** Bytes that may still be produced. */
  left: number;
  readonly total: number;
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

export interface Sink {
  push(chunk: Uint8Array): void;
  end(): void;
}

const OUT_CHUNK = 64 * 1024;

/** Gathers a decoder's output in 64 KiB chunks, charging each before it goes to the next stage. */
export class Out {
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

export interface Decoder {
  done: boolean;
  push(chunk: Uint8Array, out: Out): void;
}
