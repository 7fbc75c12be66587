/**
 * The gateway's metrics (`GET /metrics`, docs/operator-guide.md "Operating"). Request outcomes and durations are
 * recorded once, where a request ends (request_trace.ts); gauges of open streams and upstream calls move
 * with them; held credit and group commit are read from the ledger when scraped. Label values come from
 * fixed sets (families, surfaces, statuses, error codes), so the series stay bounded.
 */
import type { CommitStats } from "../accounts/group_commit.ts";
import type { UsageRow } from "../store/types.ts";
import { PICO_PER_USD } from "../money/usd.ts";
import { Registry } from "../util/prometheus.ts";

/** Request totals, from a few ms to a long stream. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
/** Upstream time to the response head. */
const TTFB_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** The gateway's own time: sub-millisecond when healthy. */
const ADDED_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
const QUEUE_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** The codes of the gateway's own request-rate refusals, by the scope they limit (src/http/rate_limits.ts). */
const RATE_LIMIT_SCOPES: Readonly<Record<string, string>> = {
  client_key_rate_limit: "key",
  client_ip_rate_limit: "ip",
  usage_rate_limit: "usage",
};

/**
 * The codes of refusals for want of capacity before any upstream call: the capacity slots
 * (src/upstream/capacity_slots.ts) and theta's account queue and models (src/families/theta/dispatch.ts).
 */
const CAPACITY_CODES = [
  "service_capacity_saturated",
  "standard_capacity_saturated",
  "queue_timeout",
  "provider_at_capacity",
];

/** Codes that can end a request after its upstream call and are the gateway's own, not the upstream's. */
const NOT_UPSTREAM = new Set(["service_unavailable"]); // the shutdown's cut (src/http/shutdown.ts)

/** What the ledger tells at scrape time. */
export interface LedgerView {
  stats(): CommitStats;
  /** Credit held by this process's open requests, pico-USD. */
  held(): bigint;
}

/** One finished request, as request_trace.ts reports it. */
export interface RequestOutcome {
  family: string;
  surface: string;
  status: number;
  code: string | undefined;
  totalMs: number;
  /** Undefined when the request never called the upstream. */
  upstreamTtfbMs: number | undefined;
  upstreamMs: number | undefined;
  /** The client left (the usage row says cancelled): its error is not the upstream's. */
  cancelled: boolean;
}

const usd = (pico: bigint) => Number(pico) / Number(PICO_PER_USD);

export class GatewayMetrics {
  readonly registry = new Registry();
  readonly requests = this.registry.counter(
    "gateway_requests_total",
    "API requests by model family (none: not a generation), surface and HTTP status.",
    ["family", "surface", "status"],
  );
  readonly duration = this.registry.histogram(
    "gateway_request_duration_seconds",
    "Total time of an API request, from its arrival to its answer (a stream: to its end).",
    ["family", "surface"],
    DURATION_BUCKETS,
  );
  readonly upstreamTtfb = this.registry.histogram(
    "gateway_upstream_ttfb_seconds",
    "Upstream time to first byte: the upstream call going out to its response head.",
    ["family"],
    TTFB_BUCKETS,
  );
  readonly added = this.registry.histogram(
    "gateway_added_latency_seconds",
    "The gateway's own time on a request that called the upstream: total minus the upstream exchange " +
      "(the call going out to its settlement).",
    ["family", "surface"],
    ADDED_BUCKETS,
  );
  readonly openStreams = this.registry.gauge(
    "gateway_open_streams",
    "Streams answered with a 200 and not ended yet.",
  ).labels();
  readonly upstreamInflight = this.registry.gauge(
    "gateway_upstream_inflight",
    "Upstream calls out and not settled yet, by family.",
    ["family"],
  );
  readonly settlements = this.registry.counter(
    "gateway_settlements_total",
    "Holds settled, by family and usage-row status (ok, error, cancelled).",
    ["family", "status"],
  );
  readonly charged = this.registry.counter(
    "gateway_charged_usd_total",
    "USD charged at settlement, by family.",
    ["family"],
  );
  readonly rateLimited = this.registry.counter(
    "gateway_rate_limited_total",
    "Requests refused by the gateway's own request rates, by scope (key, ip, usage).",
    ["scope"],
  );
  readonly writtenOff = this.registry.counter(
    "gateway_written_off_usd_total",
    "USD of usage priced beyond what the hold and the free balance could cover, written off, by family.",
    ["family"],
  );
  readonly capacityRefused = this.registry.counter(
    "gateway_capacity_refused_total",
    "Requests refused for want of capacity before any upstream call (slots, theta's queue), by code.",
    ["code"],
  );
  readonly upstreamErrors = this.registry.counter(
    "gateway_upstream_errors_total",
    "Requests that called the upstream and ended with an error (HTTP or stream error frame), by code.",
    ["family", "code"],
  );
  /** Observed for every theta request granted an account (spec §4.7, src/families/theta/dispatch.ts). */
  readonly thetaQueueWait = this.registry.histogram(
    "gateway_theta_queue_wait_seconds",
    "Time a theta request waited for an upstream account.",
    [],
    QUEUE_BUCKETS,
  ).labels();

  constructor() {
    // Every scope from the start, so a rate over the counter is defined before the first refusal.
    for (const scope of new Set(Object.values(RATE_LIMIT_SCOPES))) this.rateLimited.labels(scope);
    for (const code of CAPACITY_CODES) this.capacityRefused.labels(code);
  }

  /** Held credit and group commit, read from the ledger at scrape time. */
  watchLedger(ledger: LedgerView): void {
    const r = this.registry;
    r.collect("gateway_held_usd", "Credit held by open requests of this process, USD.", {
      kind: "gauge",
      read: () => usd(ledger.held()),
    });
    r.collect("gateway_group_commit_batch_rows", "Usage rows per group-commit round (sum and rounds).", {
      kind: "summary",
      read: () => ({ sum: ledger.stats().rows, count: ledger.stats().commits }),
    });
    r.collect("gateway_group_commit_batch_rows_max", "The largest group-commit round so far, rows.", {
      kind: "gauge",
      read: () => ledger.stats().maxRows,
    });
    r.collect(
      "gateway_group_commit_lag_seconds",
      "Oldest pending change to durable, per round (sum, rounds).",
      {
        kind: "summary",
        read: () => ({ sum: ledger.stats().lagMsSum / 1000, count: ledger.stats().commits }),
      },
    );
    r.collect("gateway_group_commit_lag_seconds_max", "The largest group-commit lag so far, seconds.", {
      kind: "gauge",
      read: () => ledger.stats().maxLagMs / 1000,
    });
    r.collect(
      "gateway_group_commit_pending_seconds",
      "Age of the oldest ledger change not durable yet, seconds (0: none); /readyz fails above " +
        "SETTLE_DURABILITY_MS.",
      { kind: "gauge", read: () => ledger.stats().pendingMs / 1000 },
    );
    r.collect("gateway_group_commit_failures_total", "Group-commit rounds that failed (and were retried).", {
      kind: "counter",
      read: () => ledger.stats().failures,
    });
  }

  /** The capacity slots (src/upstream/capacity_slots.ts), read at scrape time: saturation is busy / max. */
  watchSlots(slots: { readonly inflight: number; readonly max: number }): void {
    this.registry.collect(
      "gateway_capacity_slots_busy",
      "Capacity slots held: generation requests from before their hold to their settlement.",
      { kind: "gauge", read: () => slots.inflight },
    );
    this.registry.collect("gateway_capacity_slots_max", "MAX_INFLIGHT_UPSTREAM (0: no bound).", {
      kind: "gauge",
      read: () => slots.max,
    });
  }

  /** A hold settled (exactly once per reservation). */
  settled(row: UsageRow): void {
    this.settlements.labels(row.family, row.status).inc();
    if (row.charged > 0n) this.charged.labels(row.family).inc(usd(row.charged));
    if (row.writtenOff > 0n) this.writtenOff.labels(row.family).inc(usd(row.writtenOff));
  }

  /** A request ended: counted once, with its durations and, when it failed, its code. */
  requestEnded(o: RequestOutcome): void {
    this.requests.labels(o.family, o.surface, statusLabel(o.status)).inc();
    this.duration.labels(o.family, o.surface).observe(o.totalMs / 1000);
    if (o.upstreamMs !== undefined) {
      this.added.labels(o.family, o.surface).observe(Math.max(0, o.totalMs - o.upstreamMs) / 1000);
      if (o.upstreamTtfbMs !== undefined) this.upstreamTtfb.labels(o.family).observe(o.upstreamTtfbMs / 1000);
    }
    if (o.code === undefined) return;
    const scope = RATE_LIMIT_SCOPES[o.code];
    if (scope) this.rateLimited.labels(scope).inc();
    if (o.upstreamMs === undefined && CAPACITY_CODES.includes(o.code)) {
      this.capacityRefused.labels(o.code).inc();
    }
    if (o.upstreamMs !== undefined && !o.cancelled && !NOT_UPSTREAM.has(o.code)) {
      this.upstreamErrors.labels(o.family, o.code).inc();
    }
  }

  render(): string {
    return this.registry.render();
  }
}

/** HTTP statuses as label strings, made once each. */
const STATUS_LABELS: string[] = [];
function statusLabel(status: number): string {
  return STATUS_LABELS[status] ??= String(status);
}
