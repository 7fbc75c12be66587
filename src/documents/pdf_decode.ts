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
import { concatBytes } from "../util/bytes.ts";
import { type Budget, charge, type Decoder, Out, type Sink } from "./pdf_budget.ts";
import { Ascii85, AsciiHex, Lzw, RunLength } from "./pdf_filters.ts";
import { FlateError, Inflater } from "./pdf_inflate.ts";

export type { Budget };

export type FilterKind = "flate" | "lzw" | "ahx" | "a85" | "rl";

export interface Stage {
  kind: FilterKind;
  /** LZW /EarlyChange (pdf.js default 1). */
  earlyChange?: number;
  /** /Predictor ≥ 2 after Flate or LZW: bytes per input row and per output row. */
  predictor?: { inRow: number; outRow: number };
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
  return collect ? concatBytes(kept) : null; // always a copy: never a view of the file
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
        new Inflater(parts.length === 1 ? parts[0]! : concatBytes(parts), out).run();
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
