/**
 * A token bucket per key for usage-report reads (429 usage_rate_limit with Retry-After). In memory:
 * the process that serves requests is the only one, and a restart merely refills every bucket.
 */

/** Sustained reads per second per key. A report scans the key's rows, so it is not free. */
export const USAGE_READS_PER_SECOND = 10;
/** Reads allowed back to back (a dashboard loading a summary and a few pages at once). */
export const USAGE_READS_BURST = 20;

interface Bucket {
  tokens: number;
  at: number;
}

export class TokenBuckets {
  readonly #buckets = new Map<string, Bucket>();

  constructor(
    private readonly ratePerSecond = USAGE_READS_PER_SECOND,
    private readonly burst = USAGE_READS_BURST,
  ) {}

  /** Takes one token; returns 0 when allowed, otherwise the whole seconds to wait (≥ 1). */
  take(id: string, now: number): number {
    const b = this.#buckets.get(id) ?? { tokens: this.burst, at: now };
    b.tokens = Math.min(this.burst, b.tokens + Math.max(0, now - b.at) * this.ratePerSecond / 1000);
    b.at = Math.max(b.at, now);
    this.#buckets.set(id, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      this.#prune(now);
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / this.ratePerSecond));
  }

  get size(): number {
    return this.#buckets.size;
  }

  /** Drops buckets that have refilled completely (they are equal to a fresh one), bounding memory. */
  #prune(now: number): void {
    if (this.#buckets.size < 1024) return;
    const fullAfterMs = this.burst / this.ratePerSecond * 1000;
    for (const [id, b] of this.#buckets) if (now - b.at >= fullAfterMs) this.#buckets.delete(id);
  }
}
