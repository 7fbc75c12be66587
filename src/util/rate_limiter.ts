/**
 * Request rate limiting: the interface every limit of the gateway uses (the gateway's own per-key and
 * per-address limits, src/http/rate_limits.ts; reads of usage rows, src/reports/rate_limit.ts) and its one
 * implementation today, GCRA in process memory.
 *
 * GCRA (the generic cell rate algorithm) is a token bucket kept as one number per bucket: the
 * theoretical arrival time (TAT) of the next request at the sustained rate. A request at `now` is
 * admitted when `max(TAT, now) + T - now <= burst × T` (T = one request's interval), and then
 * TAT becomes `max(TAT, now) + T`; a refused request changes nothing. Time is kept in whole
 * microseconds (integers far below 2^53), so the arithmetic is exact and `Retry-After` — the excess
 * rounded up to whole seconds — is exactly the first whole second at which the same request would be
 * admitted.
 *
 * Memory: a bucket whose TAT has passed is equal to a fresh one and is dropped by a sweep (every
 * minute, and whenever the map reaches `maxEntries`). When a flood of distinct ids keeps the map full
 * of live buckets, the least recently admitted are evicted: the map never exceeds `maxEntries`, and an
 * evicted id merely gets its burst back.
 */

/** One limit. A shared (multi-process) implementation can stand beside the in-memory one. */
export interface RateLimiter {
  /**
   * Counts one request of `id` at `nowMs` (ms since the epoch). Returns 0 when admitted; otherwise the
   * request is refused, not counted, and the result is the whole seconds (≥ 1) until it would be.
   */
  take(id: string, nowMs: number): number;
}

export interface RateLimit {
  /** Sustained requests per second (> 0; fractions allowed: 0.5 = one request every 2 s). */
  ratePerSecond: number;
  /** Requests admitted back to back from a full bucket (≥ 1). */
  burst: number;
}

/** Buckets kept per limiter before live ones are evicted (≈ 100 bytes each). */
export const DEFAULT_MAX_BUCKETS = 100_000;
/** Expired buckets are swept at least this often (on the next request after it). */
const SWEEP_INTERVAL_US = 60_000_000;

export class GcraLimiter implements RateLimiter {
  /** id → TAT in µs. Insertion order = least recently admitted first (an admitted id is moved last). */
  readonly #tat = new Map<string, number>();
  /** One request's interval, in µs (≥ 1). */
  readonly #intervalUs: number;
  /** burst × interval: how far ahead of now the TAT may run. */
  readonly #toleranceUs: number;
  readonly #maxEntries: number;
  #lastSweepUs = 0;

  constructor(limit: RateLimit, opts: { maxEntries?: number } = {}) {
    if (!(limit.ratePerSecond > 0) || !Number.isFinite(limit.ratePerSecond)) {
      throw new RangeError(`rate must be a positive number, got ${limit.ratePerSecond}`);
    }
    if (!Number.isInteger(limit.burst) || limit.burst < 1) {
      throw new RangeError(`burst must be a whole number ≥ 1, got ${limit.burst}`);
    }
    this.#intervalUs = Math.max(1, Math.round(1_000_000 / limit.ratePerSecond));
    this.#toleranceUs = limit.burst * this.#intervalUs;
    this.#maxEntries = Math.max(1, opts.maxEntries ?? DEFAULT_MAX_BUCKETS);
  }

  take(id: string, nowMs: number): number {
    const now = Math.floor(nowMs) * 1000;
    const prev = this.#tat.get(id);
    const next = this.#next(prev, now);
    const excess = next - now - this.#toleranceUs;
    if (excess > 0) return Math.ceil(excess / 1_000_000);
    if (prev === undefined) {
      if (this.#tat.size >= this.#maxEntries || now - this.#lastSweepUs >= SWEEP_INTERVAL_US) {
        this.#sweep(now);
      }
    } else this.#tat.delete(id); // re-inserted below: keeps the map in last-admitted order
    this.#tat.set(id, next);
    return 0;
  }

  /**
   * What `take` would answer at `nowMs`, counting nothing: for a limit on outcomes known only afterwards (the
   * dashboard's failed sign-ins: refused while the bucket is empty, counted by `take` when one fails).
   */
  wait(id: string, nowMs: number): number {
    const now = Math.floor(nowMs) * 1000;
    const excess = this.#next(this.#tat.get(id), now) - now - this.#toleranceUs;
    return excess > 0 ? Math.ceil(excess / 1_000_000) : 0;
  }

  /** The TAT after one more request at `now` (µs), from the bucket's TAT `prev`. */
  #next(prev: number | undefined, now: number): number {
    return (prev === undefined || prev < now ? now : prev) + this.#intervalUs;
  }

  /** Buckets held now (for tests and metrics). */
  get size(): number {
    return this.#tat.size;
  }

  /** Drops every expired bucket; if the map is still full, evicts the least recently admitted to 7/8. */
  #sweep(now: number): void {
    this.#lastSweepUs = now;
    for (const [id, tat] of this.#tat) if (tat <= now) this.#tat.delete(id);
    if (this.#tat.size < this.#maxEntries) return;
    let drop = this.#tat.size - Math.floor(this.#maxEntries * 7 / 8);
    for (const id of this.#tat.keys()) {
      if (drop-- <= 0) break;
      this.#tat.delete(id);
    }
  }
}
