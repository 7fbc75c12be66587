/**
 * Structured logs: one JSON object per line, `ts`, `level` and `msg` first, then the fields. Lines below the
 * configured level (`LOG_LEVEL`) are dropped before anything is built. Callers pass identifiers, counts and
 * codes, never keys or content (README "Operating the gateway").
 */

export const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;
export type LogLevel = typeof LOG_LEVELS[number];

/** Where finished lines go (without the newline); stdout unless a test captures them. */
export type LogSink = (line: string) => void;

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };
const encoder = new TextEncoder();

export function stdoutSink(line: string): void {
  const bytes = encoder.encode(line + "\n");
  for (let off = 0; off < bytes.length;) off += Deno.stdout.writeSync(bytes.subarray(off));
}

export class Logger {
  readonly #min: number;

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
      this.sink(JSON.stringify({ ts: new Date(this.now()).toISOString(), level, msg, ...fields }));
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
