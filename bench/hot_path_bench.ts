/**
 * The per-request cost of the cross-cutting stages on the hot path (target: the rate limiter and the
 * metrics together under 20 µs): the two request-rate checks with both limits on over 10,000 keys and
 * addresses; one request's trace from its arrival to its end (metrics only: the log line off); and the log
 * line on top (JSON built and written to /dev/null); and what the optional features cost a request that does not
 * use them (target: ≤ 2% of a bare proxy's CPU per request): the Idempotency-Key lookup of a request without
 * the header (src/idempotency/header.ts, all src/engine/idempotent.ts does then) and both request-rate checks
 * with the limits off (their default). In-process, after a warm-up; µs per request.
 * `deno run -A bench/hot_path_bench.ts` runs it alone.
 */
import { parseConfig } from "../src/config/env.ts";
import { requestLimits } from "../src/http/rate_limits.ts";
import type { UsageRow } from "../src/store/types.ts";
import { idempotencyKey } from "../src/idempotency/header.ts";
import { GatewayMetrics } from "../src/telemetry/metrics.ts";
import { RequestTrace } from "../src/telemetry/request_trace.ts";
import { Logger } from "../src/util/log.ts";

export interface HotPathResult {
  requests: number;
  limiterUs: number;
  metricsUs: number;
  logLineUs: number;
  /** Switched off: the Idempotency-Key lookup of a request without one. */
  idempotencyOffUs: number;
  /** Switched off: both request-rate checks with the limits at their default, off. */
  limitsOffUs: number;
}

const SPREAD = 10_000;

function row(i: number): UsageRow {
  return {
    requestId: `req_${i}`,
    keyId: `key_${i % SPREAD}`,
    family: "alpha",
    model: "k3",
    endpoint: "/v1/chat/completions",
    stream: false,
    status: "ok",
    createdAt: 0,
    inputTokens: 120,
    cachedInputTokens: 0,
    outputTokens: 40,
    webSearchRequests: 0,
    reserved: 900_000_000n,
    charged: 153_000_000n,
    writtenOff: 0n,
    usageSource: "upstream",
    rates: { input: 1n, cacheRead: 1n, output: 1n, search: 0n },
  };
}

/** Best of three rounds of `n` calls, µs per call. */
function usPerCall(n: number, fn: (i: number) => void): number {
  for (let i = 0; i < n; i++) fn(i); // warm-up (JIT)
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) fn(i);
    best = Math.min(best, (performance.now() - t0) * 1000 / n);
  }
  return best;
}

export function benchHotPath(requests = 200_000): HotPathResult {
  const limits = requestLimits(parseConfig({
    KEY_RATE_LIMIT_RPS: "1000000",
    IP_RATE_LIMIT_RPS: "1000000",
    TRUSTED_PROXIES: "10.0.0.0/8",
  }));
  const headers = new Headers({ "x-forwarded-for": "198.51.100.7, 10.1.2.3" });
  const peers = Array.from({ length: SPREAD }, (_, i) => `10.${(i >> 8) & 255}.${i & 255}.9`);
  const keys = Array.from({ length: SPREAD }, (_, i) => `key_${i}`);
  let now = Date.now(); // forward only: a clock stepping back would find every bucket ahead of it
  const limiterUs = usPerCall(requests, (i) => {
    now += 1;
    limits.admitAddress(headers, peers[i % SPREAD]!, now);
    limits.admitKey(keys[i % SPREAD]!, now);
  });

  const rows = Array.from({ length: SPREAD }, (_, i) => row(i));
  const request = (log: Logger) => {
    // The request line as LOG_OK_GENERATIONS=on writes it for every request (off, these rows write none).
    const telemetry = { metrics: new GatewayMetrics(), log, config: { LOG_OK_GENERATIONS: "on" } as const };
    return (i: number) => {
      const t = new RequestTrace(telemetry, `req_${i}`, "openai_chat", "/v1/chat/completions");
      t.keyId = keys[i % SPREAD];
      t.family = "alpha";
      t.model = "k3";
      t.upstreamStarted();
      t.upstreamHead();
      t.settled(rows[i % SPREAD]!);
      t.end(200);
    };
  };
  const metricsUs = usPerCall(requests, request(new Logger("warn")));
  const devNull = Deno.openSync("/dev/null", { write: true });
  const encoder = new TextEncoder();
  const withLine = usPerCall(
    requests,
    request(new Logger("info", (line) => devNull.writeSync(encoder.encode(line + "\n")))),
  );
  devNull.close();
  // An SDK's request head, as the handler sees it (Deno's Headers), without an Idempotency-Key.
  const sdkHead = new Request("http://127.0.0.1/v1/chat/completions", {
    method: "POST",
    headers: {
      host: "127.0.0.1:8080",
      "content-type": "application/json",
      authorization: "Bearer gd-0123456789abcdef0123456789abcdef",
      "user-agent": "OpenAI/JS 6.9.1",
      accept: "application/json",
      "content-length": "120",
    },
  }).headers;
  let keyed = 0;
  const idempotencyOffUs = usPerCall(requests, () => {
    if (idempotencyKey(sdkHead) !== undefined) keyed++;
  });
  if (keyed !== 0) throw new Error("hot path bench: a key where none was sent");
  const off = requestLimits(parseConfig({}));
  const limitsOffUs = usPerCall(requests, (i) => {
    off.admitAddress(headers, peers[i % SPREAD]!, now);
    off.admitKey(keys[i % SPREAD]!, now);
  });
  return { requests, limiterUs, metricsUs, logLineUs: withLine - metricsUs, idempotencyOffUs, limitsOffUs };
}

if (import.meta.main) {
  const r = benchHotPath();
  console.log(
    `rate limiter ${r.limiterUs.toFixed(2)} µs + metrics ${r.metricsUs.toFixed(2)} µs = ${
      (r.limiterUs + r.metricsUs).toFixed(2)
    } µs per request; the log line ${r.logLineUs.toFixed(2)} µs more (${r.requests} requests, best of 3); ` +
      `switched off: no Idempotency-Key ${r.idempotencyOffUs.toFixed(3)} µs, rate limits ${
        r.limitsOffUs.toFixed(3)
      } µs`,
  );
}
