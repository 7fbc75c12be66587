/**
 * The HTTP scenarios: direct-to-simulator vs a bare Deno proxy (the runtime's floor) vs through the
 * gateway.
 */
import { type CpuUse, formatCpu, withCpu } from "./cpu.ts";
import { type LoadResult, percentile, runLoad } from "./load.ts";
import type { Proc } from "./procs.ts";
import { ms, num, ratio, type Row } from "./report.ts";

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

/** CPU milliseconds a process spent per completed request. */
export const cpuMs = (r: LoadResult & { cpu: CpuUse }, name: string) =>
  (r.cpu.byName[name] ?? NaN) * r.wallMs / Math.max(1, r.completed);

export const errNote = (r: LoadResult) => r.errors > 0 ? ` (${r.errors} errors)` : "";

/** Target 1: non-streaming latency and throughput: direct, bare Deno proxy, through the gateway. */
export async function plainScenarios(t: Targets): Promise<Row[]> {
  const rows: Row[] = [];
  const short = chat("Say hello in one short sentence.", false);

  t.log("non-streaming, c=1");
  const c1 = await pair(t, "c=1", short, 1);
  const p = (r: LoadResult, q: number) => percentile(r.latency, q);
  const add50 = p(c1.gateway, 50) - p(c1.direct, 50);
  const add99 = p(c1.gateway, 99) - p(c1.direct, 99);
  const bare50 = p(c1.bare, 50) - p(c1.direct, 50);
  const bare99 = p(c1.bare, 99) - p(c1.direct, 99);
  const beyond50 = p(c1.gateway, 50) - p(c1.bare, 50);
  const beyond99 = p(c1.gateway, 99) - p(c1.bare, 99);
  rows.push(
    {
      metric: "Non-stream c=1: req/s",
      direct: num(c1.direct.rps),
      bare: num(c1.bare.rps) + errNote(c1.bare),
      gateway: num(c1.gateway.rps) + errNote(c1.gateway),
      ratio: ratio(c1.gateway.rps, c1.direct.rps),
    },
    {
      metric: "Non-stream c=1: p50 latency",
      direct: ms(p(c1.direct, 50)),
      bare: ms(p(c1.bare, 50)),
      gateway: ms(p(c1.gateway, 50)),
      ratio: ratio(p(c1.gateway, 50), p(c1.direct, 50)),
    },
    {
      metric: "Non-stream c=1: p99 latency",
      direct: ms(p(c1.direct, 99)),
      bare: ms(p(c1.bare, 99)),
      gateway: ms(p(c1.gateway, 99)),
      ratio: ratio(p(c1.gateway, 99), p(c1.direct, 99)),
    },
    {
      metric: "Added latency c=1, p50 (gateway − direct)",
      gateway: ms(add50),
      target: "< 0.5 ms",
      pass: add50 < 0.5,
    },
    {
      metric: "Added latency c=1, p99 (gateway − direct)",
      gateway: ms(add99),
      target: "< 2 ms",
      pass: add99 < 2,
    },
    {
      metric: "Added latency of the bare proxy c=1, p50 / p99 (bare − direct)",
      bare: `${ms(bare50)} / ${ms(bare99)}`,
      target: FLOOR,
    },
    {
      metric: "Gateway added latency beyond the bare proxy c=1, p50 / p99 (gateway − bare)",
      gateway: `${ms(beyond50)} / ${ms(beyond99)}`,
      target: FLOOR,
    },
    {
      metric: "Gateway / bare proxy req/s, c=1",
      gateway: ratio(c1.gateway.rps, c1.bare.rps),
      target: FLOOR,
    },
  );

  t.log("non-streaming, c=32");
  const c32 = await pair(t, "c=32", short, 32);
  rows.push(
    {
      metric: "Non-stream c=32: req/s",
      direct: num(c32.direct.rps),
      bare: num(c32.bare.rps) + errNote(c32.bare),
      gateway: num(c32.gateway.rps) + errNote(c32.gateway),
      ratio: ratio(c32.gateway.rps, c32.direct.rps),
      target: "gateway ≥ 5,000 req/s",
      pass: c32.gateway.rps >= 5000 && c32.gateway.errors === 0,
    },
    {
      metric: "Non-stream c=32: p50 latency",
      direct: ms(p(c32.direct, 50)),
      bare: ms(p(c32.bare, 50)),
      gateway: ms(p(c32.gateway, 50)),
      ratio: ratio(p(c32.gateway, 50), p(c32.direct, 50)),
    },
    {
      metric: "Non-stream c=32: p99 latency",
      direct: ms(p(c32.direct, 99)),
      bare: ms(p(c32.bare, 99)),
      gateway: ms(p(c32.gateway, 99)),
      ratio: ratio(p(c32.gateway, 99), p(c32.direct, 99)),
    },
    {
      metric: "Gateway / bare proxy req/s, c=32",
      gateway: ratio(c32.gateway.rps, c32.bare.rps),
      target: FLOOR,
    },
    {
      metric: "Gateway added latency beyond the bare proxy c=32, p50 (gateway − bare)",
      gateway: ms(p(c32.gateway, 50) - p(c32.bare, 50)),
      target: FLOOR,
    },
  );

  const gwCpu = cpuMs(c32.gateway, "gateway");
  const bareCpu = cpuMs(c32.bare, "bare");
  rows.push(
    {
      metric: "Non-stream c=32: CPU per request (gateway process / simulator process)",
      direct: `sim ${ms(cpuMs(c32.direct, "sim"))}`,
      bare: `bare ${ms(bareCpu)} (+ sim ${ms(cpuMs(c32.bare, "sim"))})`,
      gateway: `gw ${ms(gwCpu)} (+ sim ${ms(cpuMs(c32.gateway, "sim"))})`,
    },
    {
      metric: "Implied gateway capacity with one dedicated core (1000 / CPU ms per request)",
      bare: `${num(1000 / bareCpu)} req/s`,
      gateway: `${num(1000 / gwCpu)} req/s`,
      target: "informational (contention-free estimate)",
    },
  );

  t.notes.push(
    "Runtime floor: the 'Bare Deno proxy' column is bench/bare_proxy.ts, a subprocess with no logic at " +
      "all — Deno.serve → read the request body → fetch the same path on the simulator with the same " +
      "method, content-type and authorization → return the upstream body (res.text() as " +
      "application/json, or res.body passed through as text/event-stream when the request asks to " +
      "stream). It has the gateway's two loopback hops and nothing else, so its cost over direct is what " +
      "Deno's own HTTP server + fetch charge any Deno proxy on this machine. In this run it added " +
      `${ms(bare50)} p50 / ${ms(bare99)} p99 at c=1 and reached ${num(c1.bare.rps)} req/s at c=1 and ` +
      `${num(c32.bare.rps)} req/s at c=32 (${ms(bareCpu)} of its own CPU per request, vs the gateway's ` +
      `${ms(gwCpu)}); the gateway reached ${ratio(c1.gateway.rps, c1.bare.rps)} and ` +
      `${ratio(c32.gateway.rps, c32.bare.rps)} of those rates and added ${ms(beyond50)} p50 beyond it at ` +
      `c=1. The bare proxy itself ${bare50 < 0.5 ? "met" : "missed"} the added-p50 target ` +
      `(${ms(bare50)} vs < 0.5 ms) and ${c32.bare.rps >= 5000 ? "met" : "missed"} the ≥ 5,000 req/s ` +
      `target (${num(c32.bare.rps)} req/s): a target the bare proxy misses is out of reach for any Deno ` +
      "HTTP proxy on this box, whatever its logic, so judge the gateway's own overhead against the bare " +
      "proxy (the gateway − bare and gateway / bare rows) as well as against the targets.",
  );
  return rows;
}
