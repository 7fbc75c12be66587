/** Builds the App from a Config and serves it. Used by main.ts, the tests and the benchmark. */
import { openAccounts } from "./accounts/open_accounts.ts";
import type { App } from "./app.ts";
import { Tariff } from "./billing/tariff.ts";
import { loadTariff } from "./billing/tariff_rows.ts";
import { type Config, isDemoMode } from "./config/env.ts";
import { type ConnectionBounds, serveGateway } from "./http/serve.ts";
import { createHandler } from "./http/server.ts";
import { drain } from "./http/shutdown.ts";
import { DocumentExtraction } from "./documents/mod.ts";
import { loginLimiter } from "./dashboard/login_limit.ts";
import { usageReadLimiter } from "./reports/rate_limit.ts";
import { openStore } from "./store/open.ts";
import { Shop } from "./shop/shop.ts";
import { idGenerator } from "./util/ids.ts";
import { InFlight } from "./util/in_flight.ts";
import { Serial } from "./util/serial.ts";
import { SingleFlight } from "./util/single_flight.ts";
import { buildFamilies } from "./families/registry.ts";
import { simulatorTargets, targetsFromConfig } from "./families/upstreams.ts";
import { GatewayMetrics } from "./telemetry/metrics.ts";
import { Logger, type LogSink } from "./util/log.ts";
import { CapacitySlots } from "./upstream/capacity_slots.ts";
import { KeyedRuns } from "./idempotency/keyed_runs.ts";
import { WarmShapes } from "./util/warm_shapes.ts";
import { upstreamHttp } from "./upstream/http_client.ts";

export interface Gateway {
  app: App;
  url: string;
  port: number;
  /** URL of the in-process simulator in demo mode. */
  simulatorUrl?: string;
  /**
   * Graceful shutdown (docs/operator-guide.md "Graceful shutdown"): open requests get up to SHUTDOWN_GRACE_MS, then are cut;
   * with none open it returns at once. A second call ends the grace now and returns the same promise.
   */
  close(): Promise<void>;
}

/** The upstream simulator a demo-mode gateway serves every family from (main.ts composes it). */
export interface DemoUpstream {
  url: string;
  close(): Promise<void>;
}

/**
 * `connection`: the header/idle deadlines (src/http/serve.ts); tests shorten them. `worker`: see App.worker. `simulator`: required
 * in demo mode (no upstream URL configured), closed with the gateway. `logSink`: where log lines go
 * (stdout unless a test captures them).
 */
export async function startGateway(
  config: Config,
  opts: {
    connection?: Partial<ConnectionBounds>;
    simulator?: DemoUpstream;
    logSink?: LogSink;
    /** This process's number among WORKERS (main.ts's supervisor sets it; 1 otherwise). */
    worker?: number;
  } = {},
): Promise<Gateway> {
  const demo = isDemoMode(config);
  const sim = demo ? opts.simulator : undefined;
  if (demo && !sim) throw new Error("demo mode (no *_UPSTREAM_URL set) needs the simulator: see main.ts");
  const log = new Logger(config.LOG_LEVEL, opts.logSink);
  const store = await openStore(config, log);
  let tariff: Tariff;
  try {
    tariff = new Tariff(await loadTariff(store));
  } catch (err) {
    await store.close();
    throw err;
  }
  const accounts = await openAccounts(config, store, log);
  // The clock through the App, so a test that moves `app.now` moves the families' services too.
  const families = buildFamilies(config, { store, log, now: () => app.now() });
  const metrics = new GatewayMetrics();
  const http = upstreamHttp(config.UPSTREAM_CLIENT, (name) => Deno.env.get(name));
  metrics.watchLedger({ stats: () => accounts.ledger.stats(), held: () => accounts.held() });
  const documents = new DocumentExtraction(
    { timeoutMs: config.FILES_EXTRACT_TIMEOUT_MS, mode: config.FILES_EXTRACT_MODE },
    log,
  );
  const app: App = {
    config,
    store,
    accounts,
    shop: new Shop(store, accounts),
    tariff,
    documents,
    usageReads: usageReadLimiter(),
    loginFailures: loginLimiter(config.DASHBOARD_LOGIN_FAILURES_PER_MINUTE),
    tariffChanges: new Serial(),
    storeProbe: new SingleFlight(),
    families: families.policies,
    upstreams: sim
      ? simulatorTargets(sim.url, families.policies)
      : targetsFromConfig(config, families.policies),
    upstreamFetch: http.fetch,
    slots: new CapacitySlots(config.MAX_INFLIGHT_UPSTREAM, config.PRIORITY_SLOT_SHARE),
    keyedRuns: new KeyedRuns(`gw_${crypto.randomUUID()}`, {
      detachMs: config.IDEMPOTENCY_DETACH_MS,
      maxBytes: config.IDEMPOTENCY_MAX_BUFFER_BYTES,
      maxTotalBytes: config.IDEMPOTENCY_MAX_TOTAL_BYTES,
    }),
    metrics,
    log,
    draining: false,
    inflight: new InFlight(),
    warmShapes: new WarmShapes(),
    simulated: demo,
    worker: opts.worker ?? 1,
    now: () => Date.now(),
    newId: idGenerator(),
    random: Math.random,
  };
  metrics.watchSlots(app.slots);
  // The key shop bot: its webhook route is ready before the server listens; nothing waits on Telegram.
  // The Telegram library is loaded only when a bot is configured (docs/performance.md, "Memory at rest").
  const bot = config.TELEGRAM_BOT_TOKEN
    ? await (await import("./bot/lifecycle.ts")).startBot(app, config.TELEGRAM_BOT_TOKEN)
    : undefined;
  const server = serveGateway({
    port: config.PORT,
    hostname: config.HOST,
    headerTimeoutMs: config.HTTP_HEADER_TIMEOUT_MS,
    idleTimeoutMs: config.HTTP_IDLE_TIMEOUT_MS,
    plain: config.HTTP_CONNECTION_DEADLINES === "off",
    reusePort: config.WORKERS > 1,
    log,
    ...opts.connection,
  }, createHandler(app));
  let closing: Promise<void> | undefined;
  const addr = server.addr;
  const host = addr.hostname === "0.0.0.0" ? "127.0.0.1" : addr.hostname;
  return {
    app,
    url: `http://${host}:${addr.port}`,
    port: addr.port,
    ...(sim ? { simulatorUrl: sim.url } : {}),
    close() {
      if (closing) {
        app.inflight.hurry(); // called again (a second signal): the grace ends now
        return closing;
      }
      return closing = (async () => {
        // Draining, the grace, the cut, the listener closed (src/http/shutdown.ts); with nothing open, at once.
        await bot?.stop(); // polling, retries and alerts end; webhook updates are still taken while draining
        await drain(app, server, config.SHUTDOWN_GRACE_MS);
        await families.close(); // theta's queue watch and renewal stopped, tool loop writes landed
        await Promise.all([app.tariffChanges.settled(), app.storeProbe.settled()]);
        await documents.close(); // its extraction processes end
        await accounts.close(); // leased credit returned, the ledger flushed
        http.close();
        await sim?.close();
        await store.close();
      })();
    },
  };
}
