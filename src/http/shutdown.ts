/**
 * Graceful shutdown on SIGTERM/SIGINT (docs/operator-guide.md "Graceful shutdown"; spec §7.2 503 "service temporarily down"):
 *
 * 1. draining: the listener stays open, `/readyz` answers 503 and every new API request 503
 *    `service_unavailable` (the server's stage, server.ts); admin requests are served. The ledger commits each
 *    settlement at once and checkpoints the open streams (group_commit.ts), so a SIGKILL now loses little;
 * 2. the grace: the API requests in flight and the open holds (`app.inflight`) may finish within
 *    `SHUTDOWN_GRACE_MS`; then the cut — each stream still open ends with one `service_unavailable` error
 *    frame and settles (billed for what ran), a request still waiting for its upstream answers 503 and costs
 *    nothing, and no new hold is placed;
 * 3. the listener closes and the answers already given are written out (bounded);
 * 4. leased credit goes back — a step of the ledger's `close`: no ledger leases credit yet;
 * 5. the ledger is flushed (`close`) and the store closed; main.ts then exits 0.
 */
import type { App } from "../app.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import type { GatewayServer } from "./serve.ts";

/**
 * What a draining gateway answers: behind a balancer the retry goes to another process (this one's /readyz
 * is 503 already), so the wait is short; a lone gateway answers again once restarted.
 */
export function shuttingDown(): GatewayError {
  return new GatewayError("service_unavailable", { retryAfter: 1, detail: "Шлюз перезапускается." });
}

/** After the cut, how long the cut requests and the last answers get to be written out. */
const WRITE_OUT_MS = 5_000;

/** Steps 1–3 (the caller then flushes the ledger and closes the store). */
export async function drain(app: App, server: GatewayServer, graceMs: number): Promise<void> {
  app.draining = true;
  void app.accounts.drain();
  const open = app.inflight.count;
  // A second signal ends the grace at once (Gateway.close called again).
  if (open > 0) app.log.warn("shutdown: draining", { in_flight: open, grace_ms: graceMs });
  const { cut, left } = await app.inflight.drain(graceMs, shuttingDown(), WRITE_OUT_MS);
  if (cut > 0) {
    app.log.warn("shutdown: grace over, cut with service_unavailable", { cut, still_running: left });
  }
  await within(server.shutdown(), WRITE_OUT_MS);
}

/** Waits for `p` at most `ms`. */
async function within(p: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([p, new Promise<void>((r) => timer = setTimeout(r, ms))]);
  clearTimeout(timer);
}
