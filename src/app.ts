/** The services a request handler can reach, built once at start-up and injected everywhere. */
import type { Accounts } from "./accounts/accounts.ts";
import type { Tariff } from "./billing/tariff.ts";
import type { Config } from "./config/env.ts";
import type { FamilyPolicies } from "./families/registry.ts";
import type { Shop } from "./shop/shop.ts";
import type { FileSection, Store } from "./store/store.ts";
import type { GatewayMetrics } from "./telemetry/metrics.ts";
import type { CapacitySlots } from "./upstream/capacity_slots.ts";
import type { UpstreamTargets } from "./upstream/targets.ts";
import type { UpstreamFetch } from "./upstream/wire_client.ts";
import type { InFlight } from "./util/in_flight.ts";
import type { Logger } from "./util/log.ts";
import type { GcraLimiter } from "./util/rate_limiter.ts";
import type { Serial } from "./util/serial.ts";
import type { SingleFlight } from "./util/single_flight.ts";
import type { KeyedRuns } from "./idempotency/keyed_runs.ts";
import type { WarmShapes } from "./util/warm_shapes.ts";

export interface App {
  config: Config;
  store: Store;
  accounts: Accounts;
  /** The key shop: packages, payment methods, payments, the key ledger; one per process. */
  shop: Shop;
  /** The key shop's Telegram bot in webhook mode (src/bot/); absent when the bot is off or long-polls. */
  telegramWebhook?: TelegramWebhook;
  tariff: Tariff;
  /** Text sections of uploaded and fetched documents, in this gateway's extraction pool (src/documents/). */
  documents: DocumentExtractor;
  /** Reads of a key's usage rows per key, report and dashboard together (src/reports/rate_limit.ts). */
  usageReads: GcraLimiter;
  /** Failed dashboard sign-ins per client address (src/dashboard/login_limit.ts). */
  loginFailures: GcraLimiter;
  /** Tariff changes through the admin API, one at a time (src/admin/tariff_api.ts). */
  tariffChanges: Serial;
  /** The readiness probe's store read, one at a time (src/admin/health.ts). */
  storeProbe: SingleFlight<StoreProbeResult>;
  /** Each family's policy, built for this gateway with its stateful services (families/registry.ts). */
  families: FamilyPolicies;
  upstreams: UpstreamTargets;
  /** The upstream calls' HTTP client (src/upstream/http_client.ts). */
  upstreamFetch: UpstreamFetch;
  /** The keyed requests (Idempotency-Key) running in this gateway and their bytes (docs/idempotency.md). */
  keyedRuns: KeyedRuns;
  /** This process's in-flight upstream generation requests and their bound (docs/api.md "Errors"). */
  slots: CapacitySlots;
  /**
   * Shutdown began (SIGTERM/SIGINT, docs/operator-guide.md "Graceful shutdown"): new API requests get 503
   * service_unavailable and /readyz 503, while the requests in flight get the grace.
   */
  draining: boolean;
  /** The API requests and open holds a graceful shutdown waits for, and its cut signal (src/http/shutdown.ts). */
  inflight: InFlight;
  /** The last stream's objects of each kind, kept so that a rest does not cost the optimised code (util/warm_shapes.ts). */
  warmShapes: WarmShapes;
  /** `GET /metrics` and the structured logs (docs/operator-guide.md "Operating"). */
  metrics: GatewayMetrics;
  log: Logger;
  /** Every family is served by the built-in simulator; responses say so in a header. */
  simulated: boolean;
  /** Which of the WORKERS serving processes this is (1-based; docs/operator-guide.md "Several processes"), on every answer. */
  worker: number;
  /** The clock (ms since the epoch) and the id generator, injected so tests and codecs can control them. */
  now(): number;
  newId(prefix: string): string;
  /** A number in [0, 1) (the upstream retry's jitter), injected like the clock. */
  random(): number;
}

/** Document text extraction, as handlers reach it (src/documents/mod.ts implements it). */
export interface DocumentExtractor {
  /** The text sections of one document of a known kind (pdf, docx, xlsx, pptx, txt, md, json, csv). */
  sections(
    fileId: string,
    kind: string,
    bytes: Uint8Array,
    opts?: { timeoutMs?: number; transfer?: boolean },
  ): Promise<FileSection[]>;
}

/** What the readiness probe learnt of the store: it answered, failed, or was too slow. */
export type StoreProbeResult = "ok" | "error" | "timeout";

export const SIMULATED_HEADER = "x-gateway-simulated";
export const WORKER_HEADER = "x-gateway-worker";

/**
 * What the webhook route (src/bot/webhook_route.ts) hands an update to once Telegram's secret header matched.
 * Declared here so the route reaches the bot through the App like any other service.
 */
export interface TelegramWebhook {
  /** The route's last segment, /telegram/<hook>: derived from the secret, never logged. */
  hook: string;
  /**
   * Processes one update (each update_id once). False: it could not be recorded (the store is down), so
   * Telegram should send it again; true otherwise, failures of its own handling included (logged).
   */
  receive(update: Record<string, unknown>): Promise<boolean>;
}
