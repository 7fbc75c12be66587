/**
 * The gateway's own request rates (spec §7.3 `client_ip_rate_limit`, `client_key_rate_limit`;
 * docs/configuration.md): a stage of the server (server.ts), run on every key route — generation on every
 * surface, count_tokens, models, files, the web helpers, the usage report — and on no other (admin and
 * unknown paths are not counted). The address is checked before authentication, so a flood of bad keys
 * is refused without hashing them; the key after it. A refused request reaches no handler: nothing is
 * held or charged.
 *
 * Per process: each gateway process keeps its own buckets in memory, so N processes behind one balancer
 * admit up to N × the configured rate; the operator sets the per-process figure. A shared store round
 * trip per request would cost more than the gateway's whole added latency (docs/performance.md), and
 * today one process serves a DATA_DIR. The limits sit behind `RateLimiter` (src/util/rate_limiter.ts), so
 * a shared implementation (for example one leasing quota from the store in the background) can replace
 * the in-memory one without touching this stage.
 */
import type { Config } from "../config/env.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import { GcraLimiter, type RateLimit, type RateLimiter } from "../util/rate_limiter.ts";
import { ClientAddresses } from "./client_address.ts";

export interface RequestLimits {
  /** Counts a request from `peer` (the connection's address); 429 client_ip_rate_limit when over. */
  admitAddress(headers: Headers, peer: string, now: number): void;
  /** Counts a request of an authenticated key; 429 client_key_rate_limit when over. */
  admitKey(keyId: string, now: number): void;
}

/** The limit a rate/burst pair configures; undefined when it is off (either is 0). */
export function configuredLimit(rps: number, burst: number | undefined): RateLimit | undefined {
  if (rps <= 0 || burst === 0) return undefined;
  return { ratePerSecond: rps, burst: burst ?? Math.max(1, Math.ceil(rps)) };
}

export function requestLimits(
  config: Pick<
    Config,
    | "KEY_RATE_LIMIT_RPS"
    | "KEY_RATE_LIMIT_BURST"
    | "IP_RATE_LIMIT_RPS"
    | "IP_RATE_LIMIT_BURST"
    | "TRUSTED_PROXIES"
  >,
  limiter: (limit: RateLimit) => RateLimiter = (limit) => new GcraLimiter(limit),
): RequestLimits {
  const keyLimit = configuredLimit(config.KEY_RATE_LIMIT_RPS, config.KEY_RATE_LIMIT_BURST);
  const ipLimit = configuredLimit(config.IP_RATE_LIMIT_RPS, config.IP_RATE_LIMIT_BURST);
  const byKey = keyLimit && limiter(keyLimit);
  const byAddress = ipLimit && limiter(ipLimit);
  const addresses = new ClientAddresses(config.TRUSTED_PROXIES);
  return {
    admitAddress(headers, peer, now) {
      if (!byAddress) return;
      const wait = byAddress.take(addresses.resolve(peer, headers.get("x-forwarded-for")), now);
      if (wait > 0) throw new GatewayError("client_ip_rate_limit", { retryAfter: wait });
    },
    admitKey(keyId, now) {
      if (!byKey) return;
      const wait = byKey.take(keyId, now);
      if (wait > 0) throw new GatewayError("client_key_rate_limit", { retryAfter: wait });
    },
  };
}
