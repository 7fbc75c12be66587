/**
 * Liveness and readiness (docs/operator-guide.md "Operating"), without a key, never counted or rate limited.
 * `/healthz` answers 200 whenever the process serves. `/readyz` answers 200 when the store answers a cheap
 * read within a second, no settlement has waited longer than SETTLE_DURABILITY_MS to become durable, at least
 * one upstream is configured (demo mode: the simulator), and the gateway is not draining; otherwise 503
 * naming what is not ready, so a balancer stops sending new requests.
 */
import type { App, StoreProbeResult } from "../app.ts";
import { jsonResponse } from "../request/json.ts";
import type { RouteContext } from "../request/context.ts";
import type { Store } from "../store/store.ts";

const STORE_PROBE_TIMEOUT_MS = 1_000;
/** A key id no key has (ids are `key_` + 20 hex digits): the read finds nothing, cheaply. */
const PROBE_KEY_ID = "key_readyz_probe";
const NO_STORE = { "cache-control": "no-store" };

type StoreState = StoreProbeResult;

export function healthz(_app: App, ctx: RouteContext): Response {
  return jsonResponse(200, { status: "ok" }, ctx.requestId, NO_STORE);
}

export async function readyz(app: App, ctx: RouteContext): Promise<Response> {
  const store = await probeStore(app);
  const settlements = app.accounts.ledger.stats().pendingMs <= app.config.SETTLE_DURABILITY_MS
    ? "ok"
    : "lagging";
  const upstreams = Object.values(app.upstreams).some((t) => t !== undefined) ? "ok" : "none";
  const failing = [
    ...(store === "ok" ? [] : ["store"]),
    ...(settlements === "ok" ? [] : ["settlements"]),
    ...(upstreams === "ok" ? [] : ["upstreams"]),
    ...(app.draining ? ["draining"] : []),
  ];
  return jsonResponse(
    failing.length === 0 ? 200 : 503,
    {
      ready: failing.length === 0,
      failing,
      checks: { store, settlements, upstreams, draining: app.draining },
    },
    ctx.requestId,
    NO_STORE,
  );
}

/** One probe at a time per gateway (app.storeProbe): a flood of readiness checks costs one read at a time. */
function probeStore(app: App): Promise<StoreState> {
  return app.storeProbe.run(() => readWithin(app.store, STORE_PROBE_TIMEOUT_MS));
}

async function readWithin(store: Store, ms: number): Promise<StoreState> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<StoreState>((resolve) => timer = setTimeout(() => resolve("timeout"), ms));
  try {
    return await Promise.race([
      store.getKey(PROBE_KEY_ID).then((): StoreState => "ok", (): StoreState => "error"),
      timedOut,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
