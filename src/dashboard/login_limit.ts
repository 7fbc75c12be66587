/**
 * The sign-in limit (issue 19): DASHBOARD_LOGIN_FAILURES_PER_MINUTE failed sign-ins per client address — a
 * burst of that many, then one more every 60/N s (GCRA, src/util/rate_limiter.ts) — after which every sign-in
 * from the address, right key or wrong, is 429 `dashboard_login_rate_limit` with Retry-After until the bucket
 * has room again. In process memory, like the gateway's other request rates: N processes allow N × the figure.
 */
import type { App } from "../app.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import { GcraLimiter } from "../util/rate_limiter.ts";

const LIMITERS = new WeakMap<App, GcraLimiter>();

function limiter(app: App): GcraLimiter {
  let l = LIMITERS.get(app);
  if (!l) {
    const n = app.config.DASHBOARD_LOGIN_FAILURES_PER_MINUTE;
    l = new GcraLimiter({ ratePerSecond: n / 60, burst: n });
    LIMITERS.set(app, l);
  }
  return l;
}

/** The error refusing a sign-in from `client` now, or undefined when it may try. */
export function loginRefusal(app: App, client: string): GatewayError | undefined {
  const wait = limiter(app).wait(client, app.now());
  return wait > 0 ? new GatewayError("dashboard_login_rate_limit", { retryAfter: wait }) : undefined;
}

/** Counts a failed sign-in of `client`. */
export function loginFailed(app: App, client: string): void {
  limiter(app).take(client, app.now());
}
