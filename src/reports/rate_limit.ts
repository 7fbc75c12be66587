/**
 * The read rate of the usage report per key (429 usage_rate_limit with Retry-After), on the gateway's one
 * limiter (src/util/rate_limiter.ts). In memory: the process that serves requests is the only one, and a
 * restart merely refills every bucket.
 */
import { GcraLimiter, type RateLimit } from "../util/rate_limiter.ts";

/** Sustained reads per second per key. A report scans the key's rows, so it is not free. */
export const USAGE_READS_PER_SECOND = 10;
/** Reads allowed back to back (a dashboard loading a summary and a few pages at once). */
export const USAGE_READS_BURST = 20;

export function usageReadLimiter(
  limit: RateLimit = { ratePerSecond: USAGE_READS_PER_SECOND, burst: USAGE_READS_BURST },
): GcraLimiter {
  return new GcraLimiter(limit);
}
