/**
 * Structured logs: one JSON object per line, `ts`, `level` and `msg` first, then the fields. Lines below the
 * configured level (`LOG_LEVEL`) are dropped before anything is built. Callers pass identifiers, counts and
 * codes, never keys or content (docs/operator-guide.md "Operating").
 */

import { deadline } from "./ticker.ts";

export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;
export type LogLevel = typeof LOG_LEVELS[number];

/** Where finished lines go (without the newline); stdout unless a test captures them. */
export type LogSink = (line: string) => void;

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };
const encoder = new TextEncoder();

/** Pending text beyond this is written at once rather than at the next flush (bounds the buffer). */
const MAX_PENDING_CHARS = 64 * 1024;
/** How long a line may wait for the lines after it: one write per this many ms, not one per line. */
export const LOG_FLUSH_MS = 10;

export interface BatchedSink {
  sink: LogSink;
  /** Writes what is pending now. */
  flush(): void;
}

/**
 * Lines gathered and written together about LOG_FLUSH_MS after the first of them, on the shared ticker, so a
 * request's log line costs no write before its answer goes out and a busy second makes one write per flush,
 * not one per line. A timer and a write per event-loop turn cost the gateway ≈7 µs of CPU per JSON request
 * under load (docs/performance.md "The log line's write"). `unload` (a normal exit, Deno.exit) writes what
 * is left; a SIGKILL loses at most LOG_FLUSH_MS of lines.
 */
export function batchedSink(
  write: (bytes: Uint8Array) => void,
  schedule: (fn: () => void) => void = (fn) => deadline(LOG_FLUSH_MS, fn),
): BatchedSink {
  let pending = "";
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (!pending) return;
    const text = pending;
    pending = "";
    write(encoder.encode(text));
  };
  return {
    flush,
    sink(line) {
      pending += line + "\n";
      if (pending.length >= MAX_PENDING_CHARS) return flush();
      if (!scheduled) {
        scheduled = true;
        schedule(flush);
      }
    },
  };
}

function writeStdout(bytes: Uint8Array): void {
  for (let off = 0; off < bytes.length;) off += Deno.stdout.writeSync(bytes.subarray(off));
}

/** The process's stdout log, batched (LOG_FLUSH_MS); flushed on exit. */
const stdout = batchedSink(writeStdout);
globalThis.addEventListener("unload", () => stdout.flush());

export const stdoutSink: LogSink = stdout.sink;

export class Logger {
  readonly #min: number;
  /** The last line's clock reading and its ISO text: lines of one millisecond (a busy second's) share it. */
  #tsMs = NaN;
  #ts = "";

  constructor(
    level: LogLevel,
    private readonly sink: LogSink = stdoutSink,
    private readonly now: () => number = Date.now,
  ) {
    this.#min = RANK[level];
  }

  enabled(level: LogLevel): boolean {
    return RANK[level] >= this.#min;
  }

  /** Never throws: a log line that cannot be written (stdout closed, a value JSON cannot hold) is dropped,
   *  never the request that logged it. */
  log(level: LogLevel, msg: string, fields: Record<string, unknown> = {}): void {
    if (RANK[level] < this.#min) return;
    try {
      // `ts`, `level` and `msg` first, then the fields, without merging them into one more object first.
      const now = this.now();
      if (now !== this.#tsMs) {
        this.#ts = new Date(now).toISOString();
        this.#tsMs = now;
      }
      const head = `{"ts":"${this.#ts}","level":"${level}","msg":${JSON.stringify(msg)}`;
      const rest = JSON.stringify(fields);
      this.sink(rest === "{}" ? `${head}}` : `${head},${rest.slice(1)}`);
    } catch { /* nowhere left to say it */ }
  }

  debug(msg: string, fields?: Record<string, unknown>): void {
    this.log("debug", msg, fields);
  }
  info(msg: string, fields?: Record<string, unknown>): void {
    this.log("info", msg, fields);
  }
  warn(msg: string, fields?: Record<string, unknown>): void {
    this.log("warn", msg, fields);
  }
  error(msg: string, fields?: Record<string, unknown>): void {
    this.log("error", msg, fields);
  }
}
