/**
 * One retry of an upstream call (docs/api.md "Errors"), only before the first byte and only for a failure that is
 * safe to repeat: the connection could not be made (refused, reset, DNS or TLS failure while connecting — the
 * request was never written), or the upstream answered 502 or 503. Never after a timeout or an abort (the
 * request may be running upstream), never once an answer started (the caller only ever sees a whole head),
 * never twice. The backoff is jittered so a burst of failures does not come back at once.
 */
import type { UpstreamResponse } from "./upstream_response.ts";
import { UpstreamConnectError } from "./wire_connect.ts";

const RETRY_STATUSES = new Set([502, 503]);
const BACKOFF_MIN_MS = 50;
const BACKOFF_SPREAD_MS = 100;

/** `random` in [0, 1): the injected jitter source (App.random). Rejects with the abort reason if aborted. */
export async function withOneRetry(
  attempt: () => Promise<UpstreamResponse>,
  signal: AbortSignal,
  random: () => number,
): Promise<UpstreamResponse> {
  let first: UpstreamResponse;
  try {
    first = await attempt();
  } catch (err) {
    if (signal.aborted || !isConnectFailure(err)) throw err;
    await backoff(BACKOFF_MIN_MS + random() * BACKOFF_SPREAD_MS, signal);
    return await attempt();
  }
  if (!RETRY_STATUSES.has(first.status)) return first;
  await first.body?.cancel().catch(() => {});
  await backoff(BACKOFF_MIN_MS + random() * BACKOFF_SPREAD_MS, signal);
  return await attempt();
}

/**
 * A fetch failure in the connect phase. Deno's fetch (hyper) names its phase in the error text:
 * "client error (Connect)" covers TCP refused or reset, DNS and TLS failures, before any request byte was
 * written; "client error (SendRequest)" (a connection closed under the request) may come after the request
 * went out, so it is not retried. Deno 2.9 puts the text in `cause`; older versions in the message.
 */
export function isConnectFailure(err: unknown): boolean {
  if (err instanceof UpstreamConnectError) return true;
  const texts = [err, (err as { cause?: unknown } | null)?.cause].map((e) =>
    (e as Error | undefined)?.message
  );
  return texts.some((t) => typeof t === "string" && t.includes("client error (Connect)"));
}

function backoff(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const aborted = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", aborted);
      resolve();
    }, ms);
    signal.addEventListener("abort", aborted, { once: true });
  });
}
