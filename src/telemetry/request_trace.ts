/**
 * What one API request did, filled in as it passes the layers — the server (route, key), the engine (family,
 * model, the upstream call, the settlement) — and reported once when it ends: the request metrics and one log
 * line, unless it is a generation its usage row records in full (LOG_OK_GENERATIONS; docs/operator-guide.md
 * "Logs"). It ends when the server has its answer, or, for a stream, when the
 * stream ends (`endsWithStream`): counted then, while its log line is built once that answer is written, off
 * the answer's path. Durations run on the monotonic clock (`performance.now`): `app.now` is the wall clock,
 * which tests move. Only identifiers, counts, codes and money are kept: never a key or content.
 */
import type { Family } from "../catalog/models.ts";
import { formatUsd } from "../money/usd.ts";
import type { UsageRow } from "../store/types.ts";
import type { Logger } from "../util/log.ts";
import type { GatewayMetrics, RequestOutcome } from "./metrics.ts";
import { RequestSpans, TRACING } from "./spans.ts";

export interface Telemetry {
  metrics: GatewayMetrics;
  log: Logger;
  config: { readonly LOG_OK_GENERATIONS: "on" | "off" };
}

export class RequestTrace {
  readonly startedAt = performance.now();
  /** The key's id once authenticated (never the key). */
  keyId: string | undefined;
  /** The catalog model, once the request named one that exists. */
  family: Family | undefined;
  model: string | undefined;
  stream = false;
  #row: UsageRow | undefined;
  // The auth, reserving, reserved, settled and stream marks are read by the spans alone: taken only when tracing
  // is on (a clock read each). The upstream marks feed the log line and metrics too.
  #authAt: number | undefined;
  #reservingAt: number | undefined;
  #reservedAt: number | undefined;
  #upstreamAt: number | undefined;
  #headAt: number | undefined;
  #settledAt: number | undefined;
  #streamAt: number | undefined;
  #upstreamEndAt: number | undefined;
  #streaming = false;
  #ended = false;

  /**
   * `surface`: the route's label (a generation surface, `models`, `files`…); undefined for the operator's
   * probes (health, readiness, metrics), which are neither counted nor logged.
   */
  constructor(
    private readonly telemetry: Telemetry,
    readonly requestId: string,
    readonly surface: string | undefined,
    readonly route: string | undefined,
    /** Settles once the answer is written (or the client left): the log line waits for it, off the answer's
     *  path. Without it the line is logged as the request ends. */
    private readonly written?: Promise<void>,
  ) {}

  /** The key is known (the authentication stage passed). */
  authenticated(keyId: string): void {
    this.keyId = keyId;
    if (TRACING) this.#authAt = performance.now();
  }

  /** The request passed its rules and goes to the hold. */
  reserving(): void {
    if (TRACING) this.#reservingAt = performance.now();
  }

  /** The hold is placed. */
  reserved(): void {
    if (TRACING) this.#reservedAt = performance.now();
  }

  /** The upstream call goes out (the first attempt, if it is retried): in flight until settled. */
  upstreamStarted(): void {
    if (this.#upstreamAt !== undefined) return;
    this.#upstreamAt = performance.now();
    this.telemetry.metrics.upstreamInflight.labels(this.family ?? "none").inc();
  }

  /** The upstream's response head arrived. */
  upstreamHead(): void {
    if (this.#upstreamAt !== undefined) this.#headAt ??= performance.now();
  }

  /** The hold settled: the upstream exchange is over (what follows is the gateway's own time). */
  settled(row: UsageRow): void {
    this.#row = row;
    if (TRACING) this.#settledAt = performance.now();
    this.telemetry.metrics.settled(row);
    this.#upstreamDone();
  }

  /** What the request's settlement charged so far, pico-USD (0 before it settled). */
  get charged(): bigint {
    return this.#row?.charged ?? 0n;
  }

  /** The answer is a stream that has gone out: the request ends with it (`end` from the pipeline). */
  endsWithStream(): void {
    if (this.#ended || this.#streaming) return;
    this.#streaming = true;
    if (TRACING) this.#streamAt = performance.now();
    this.telemetry.metrics.openStreams.inc();
  }

  /** Whether the request ends later, with its stream. */
  get deferred(): boolean {
    return this.#streaming;
  }

  /** The request is over with this HTTP status (and error code: a refusal, or a stream's error frame). Once. */
  end(status: number, code?: string): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#streaming) this.telemetry.metrics.openStreams.dec();
    this.#upstreamDone(); // a path that never settled still leaves the in-flight gauge
    if (this.surface === undefined) return;
    const now = performance.now();
    if (TRACING) this.#spans(now, status, code);
    const totalMs = now - this.startedAt;
    const at = this.#upstreamAt;
    const upstreamMs = at === undefined ? undefined : this.#upstreamEndAt! - at;
    const upstreamTtfbMs = at === undefined || this.#headAt === undefined ? undefined : this.#headAt - at;
    const row = this.#row;
    const outcome: RequestOutcome = {
      family: this.family ?? "none",
      surface: this.surface,
      status,
      code,
      totalMs,
      upstreamTtfbMs,
      upstreamMs,
      cancelled: row?.status === "cancelled",
    };
    this.telemetry.metrics.requestEnded(outcome);
    if (!this.telemetry.log.enabled("info")) return;
    if (recordedByRow(row, status, code) && this.telemetry.config.LOG_OK_GENERATIONS === "off") return;
    const line = () => this.#log(outcome, row);
    if (this.written) this.written.then(line, line);
    else line();
  }

  /** The request's log line (docs/operator-guide.md "Operating"). */
  #log(o: RequestOutcome, row: UsageRow | undefined): void {
    this.telemetry.log.info("request", {
      request_id: this.requestId,
      route: this.route ?? null,
      surface: o.surface,
      key_id: this.keyId ?? null,
      family: this.family ?? null,
      model: this.model ?? null,
      stream: this.stream,
      status: o.status,
      code: o.code ?? null,
      // The settlement's figures; null when the request held nothing (refused before the hold, not a generation).
      input_tokens: row?.inputTokens ?? null,
      cached_input_tokens: row?.cachedInputTokens ?? null,
      output_tokens: row?.outputTokens ?? null,
      web_search_requests: row?.webSearchRequests ?? null,
      reserved_usd: row ? formatUsd(row.reserved) : null,
      charged_usd: row ? formatUsd(row.charged) : null,
      written_off_usd: row && row.writtenOff > 0n ? formatUsd(row.writtenOff) : null,
      usage_source: row?.usageSource ?? null,
      usage_status: row?.status ?? null,
      total_ms: ms(o.totalMs),
      upstream_ttfb_ms: o.upstreamTtfbMs === undefined ? null : ms(o.upstreamTtfbMs),
      upstream_ms: o.upstreamMs === undefined ? null : ms(o.upstreamMs),
    });
  }

  /** The request's stages as spans, from the marks taken on the way (spans.ts). */
  #spans(now: number, status: number, code: string | undefined): void {
    const spans = new RequestSpans(this.requestId, this.surface!, this.route, this.startedAt);
    const stage = (name: string, from: number | undefined, to: number | undefined) => {
      if (from !== undefined && to !== undefined) spans.stage(name, from, to);
    };
    stage("auth", this.startedAt, this.#authAt);
    stage("rules", this.#authAt ?? this.startedAt, this.#reservingAt);
    stage("reserve", this.#reservingAt, this.#reservedAt);
    stage("upstream_first_byte", this.#upstreamAt, this.#headAt);
    stage("stream", this.#streamAt, this.#streaming ? now : undefined);
    stage("settle", this.#settledAt, this.#settledAt);
    spans.end(now, status, code, this.family, this.model);
  }

  #upstreamDone(): void {
    if (this.#upstreamAt === undefined || this.#upstreamEndAt !== undefined) return;
    this.#upstreamEndAt = performance.now();
    this.telemetry.metrics.upstreamInflight.labels(this.family ?? "none").dec();
  }
}

const ms = (v: number) => Math.round(v * 100) / 100;

/**
 * Whether the request is one its usage row records (LOG_OK_GENERATIONS): a generation answered in full, settled
 * `ok`, nothing written off. Its line would add only its timings, which /metrics sums, for ≈5 µs of CPU a
 * request served (docs/performance.md "The request line").
 */
const recordedByRow = (row: UsageRow | undefined, status: number, code: string | undefined) =>
  row !== undefined && row.status === "ok" && row.writtenOff === 0n && status < 400 && code === undefined;
