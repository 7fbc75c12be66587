/**
 * The read rate of a key's usage rows (429 usage_rate_limit with Retry-After), on the gateway's one limiter
 * (src/util/rate_limiter.ts): one bucket per key shared by the usage report (GET /v1/usage…) and the
 * dashboard's requests page, which read the same rows. In memory, per process (like the request rates): a
 * restart merely refills every bucket.
 */
import type { App } from "../app.ts";
import { GatewayError } from "../errors/gateway_error.ts";
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

/** Counts one read of the key's rows on this gateway (app.usageReads); 429 usage_rate_limit when over. */
export function admitRead(app: App, keyId: string): void {
  const wait = app.usageReads.take(keyId, app.now());
  if (wait > 0) throw new GatewayError("usage_rate_limit", { retryAfter: wait });
}
