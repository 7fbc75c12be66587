/**
 * The sign-in limit: DASHBOARD_LOGIN_FAILURES_PER_MINUTE failed sign-ins per client address — a
 * burst of that many, then one more every 60/N s (GCRA, src/util/rate_limiter.ts) — after which every sign-in
 * from the address, right key or wrong, is 429 `dashboard_login_rate_limit` with Retry-After until the bucket
 * has room again. In process memory, like the gateway's other request rates: N processes allow N × the figure.
 */
import type { App } from "../app.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import { GcraLimiter } from "../util/rate_limiter.ts";

/** The gateway's sign-in limiter (app.loginFailures), built from its config. */
export function loginLimiter(failuresPerMinute: number): GcraLimiter {
  return new GcraLimiter({ ratePerSecond: failuresPerMinute / 60, burst: failuresPerMinute });
}

/** The error refusing a sign-in from `client` now, or undefined when it may try. */
export function loginRefusal(app: App, client: string): GatewayError | undefined {
  const wait = app.loginFailures.wait(client, app.now());
  return wait > 0 ? new GatewayError("dashboard_login_rate_limit", { retryAfter: wait }) : undefined;
}

/** Counts a failed sign-in of `client`. */
export function loginFailed(app: App, client: string): void {
  app.loginFailures.take(client, app.now());
}
