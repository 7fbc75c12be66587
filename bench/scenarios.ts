/**
 * The fetch-loop scenarios of `deno task bench` (bench/stream_scenarios.ts): direct to the simulator, a bare
 * Deno proxy (the runtime's floor) and the gateway, driven by bench/load.ts. They measure only what wrk cannot
 * see, a stream's time to its first body chunk and many streams held at once; throughput and JSON latency are
 * the side by side's (bench/side_by_side.ts, wrk).
 */
import { type CpuUse, formatCpu, withCpu } from "./cpu.ts";
import { type LoadResult, percentile, runLoad } from "./load.ts";
import type { Proc } from "./procs.ts";
import { ms, num } from "./report.ts";

export interface Targets {
  sim: Proc;
  /** bench/bare_proxy.ts in front of the simulator. */
  bare: Proc;
  gw: Proc;
  key: string;
  seconds: number;
  warmup: number;
  log: (s: string) => void;
  /** CPU use per measured run, for the notes. */
  cpu: { label: string; use: CpuUse }[];
  /** Notes for RESULTS.md that depend on measured figures. */
  notes: string[];
}

export const PATH = "/v1/chat/completions";
export const chat = (content: string, stream: boolean) =>
  JSON.stringify({ model: "k3", stream, messages: [{ role: "user", content }] });

/**
 * The header fields the gateway puts on a JSON answer besides its content type (request-id and, for family
 * alpha, x-request-id: spec §2.5; x-gateway-hold-usd; x-gateway-worker), with values of the same length: a
 * proxy or server that carries them (bench/bare_proxy.ts ANSWER_HEAD, bench/answer_write.ts) answers with the
 * gateway's head.
 */
export const GATEWAY_ANSWER_FIELDS: Readonly<Record<string, string>> = Object.freeze({
  "x-gateway-worker": "1",
  "x-request-id": "req_McoVtOpLPXWS0000003",
  "request-id": "req_McoVtOpLPXWS0000003",
  "x-gateway-hold-usd": "0.480045",
});

/**
 * The header fields spec §2.5 asks of every JSON answer besides its content type, for family alpha (the side by
 * side's model): the request id in `request-id` and `x-request-id`. The least any gateway on this spec sends.
 */
export const SPEC_ANSWER_FIELDS: Readonly<Record<string, string>> = Object.freeze({
  "x-request-id": GATEWAY_ANSWER_FIELDS["x-request-id"]!,
  "request-id": GATEWAY_ANSWER_FIELDS["request-id"]!,
});

export type Side = "direct" | "bare" | "gateway";
/** Display names of the sides (logs, CPU table). */
export const SIDE_NAME: Record<Side, string> = { direct: "direct", bare: "bare proxy", gateway: "gateway" };
/** Informational rows about the runtime floor (no pass/fail). */
export const FLOOR = "informational (runtime floor)";

type Endpoint = { url: string; headers: Record<string, string> };

/** In run order: direct, bare proxy, gateway. */
export function endpoints(t: Pick<Targets, "sim" | "bare" | "gw" | "key">): Record<Side, Endpoint> {
  const json = { "content-type": "application/json" };
  const upstream = { ...json, authorization: "Bearer up-alpha" };
  return {
    direct: { url: t.sim.url + PATH, headers: upstream },
    bare: { url: t.bare.url + PATH, headers: upstream },
    gateway: { url: t.gw.url + PATH, headers: { ...json, authorization: `Bearer ${t.key}` } },
  };
}

/** Processes whose CPU use is recorded for every run. */
export const cpuPids = (t: Targets) => ({
  client: Deno.pid,
  bare: t.bare.pid,
  gateway: t.gw.pid,
  sim: t.sim.pid,
});

export async function pair(
  t: Targets,
  label: string,
  body: string,
  concurrency: number,
  seconds = t.seconds,
) {
  const out: Record<Side, LoadResult & { cpu: CpuUse }> = {} as never;
  for (const [side, ep] of Object.entries(endpoints(t)) as [Side, Endpoint][]) {
    const [r, use] = await withCpu(
      cpuPids(t),
      () => runLoad({ ...ep, body, concurrency, warmupSeconds: t.warmup, seconds }),
    );
    const name = SIDE_NAME[side];
    t.cpu.push({ label: `${name} ${label}`, use });
    if (r.errors > 0) t.log(`  ${name} ${label}: ${r.errors} errors, first: ${r.firstError}`);
    t.log(
      `  ${name.padEnd(10)} ${label}: ${num(r.rps)} req/s, p50 ${ms(percentile(r.latency, 50))}, ` +
        `p99 ${ms(percentile(r.latency, 99))}, ttfb p50 ${ms(percentile(r.ttfb, 50))}; ${formatCpu(use)}`,
    );
    out[side] = { ...r, cpu: use };
  }
  return out;
}

export const errNote = (r: LoadResult) => r.errors > 0 ? ` (${r.errors} errors)` : "";
