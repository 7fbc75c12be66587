/** The HTTP scenarios: direct-to-simulator vs through-the-gateway, and 1,000 open streams. */
import { type CpuUse, formatCpu, withCpu } from "./cpu.ts";
import { type LoadResult, percentile, runLoad } from "./load.ts";
import type { Proc } from "./procs.ts";
import { ms, num, ratio, type Row } from "./report.ts";

export interface Targets {
  sim: Proc;
  gw: Proc;
  key: string;
  seconds: number;
  warmup: number;
  log: (s: string) => void;
  /** CPU use per measured run, for the notes. */
  cpu: { label: string; use: CpuUse }[];
}

export const PATH = "/v1/chat/completions";
export const chat = (content: string, stream: boolean) =>
  JSON.stringify({ model: "k3", stream, messages: [{ role: "user", content }] });

export function endpoints(t: Targets) {
  const json = { "content-type": "application/json" };
  return {
    direct: { url: t.sim.url + PATH, headers: { ...json, authorization: "Bearer up-alpha" } },
    gateway: { url: t.gw.url + PATH, headers: { ...json, authorization: `Bearer ${t.key}` } },
  };
}

export async function pair(
  t: Targets,
  label: string,
  body: string,
  concurrency: number,
  seconds = t.seconds,
) {
  const out: Record<"direct" | "gateway", LoadResult & { cpu: CpuUse }> = {} as never;
  for (
    const [side, ep] of Object.entries(endpoints(t)) as [
      keyof typeof out,
      { url: string; headers: Record<string, string> },
    ][]
  ) {
    const [r, use] = await withCpu(
      { client: Deno.pid, gateway: t.gw.pid, sim: t.sim.pid },
      () => runLoad({ ...ep, body, concurrency, warmupSeconds: t.warmup, seconds }),
    );
    t.cpu.push({ label: `${side} ${label}`, use });
    if (r.errors > 0) t.log(`  ${side} ${label}: ${r.errors} errors, first: ${r.firstError}`);
    t.log(
      `  ${side.padEnd(7)} ${label}: ${num(r.rps)} req/s, p50 ${ms(percentile(r.latency, 50))}, ` +
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

/** Target 1: non-streaming latency and throughput, direct vs through the gateway. */
export async function plainScenarios(t: Targets): Promise<Row[]> {
  const rows: Row[] = [];
  const short = chat("Say hello in one short sentence.", false);

  t.log("non-streaming, c=1");
  const c1 = await pair(t, "c=1", short, 1);
  const p = (r: LoadResult, q: number) => percentile(r.latency, q);
  const add50 = p(c1.gateway, 50) - p(c1.direct, 50);
  const add99 = p(c1.gateway, 99) - p(c1.direct, 99);
  rows.push(
    {
      metric: "Non-stream c=1: req/s",
      direct: num(c1.direct.rps),
      gateway: num(c1.gateway.rps) + errNote(c1.gateway),
      ratio: ratio(c1.gateway.rps, c1.direct.rps),
    },
    {
      metric: "Non-stream c=1: p50 latency",
      direct: ms(p(c1.direct, 50)),
      gateway: ms(p(c1.gateway, 50)),
      ratio: ratio(p(c1.gateway, 50), p(c1.direct, 50)),
    },
    {
      metric: "Non-stream c=1: p99 latency",
      direct: ms(p(c1.direct, 99)),
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
  );

  t.log("non-streaming, c=32");
  const c32 = await pair(t, "c=32", short, 32);
  rows.push(
    {
      metric: "Non-stream c=32: req/s",
      direct: num(c32.direct.rps),
      gateway: num(c32.gateway.rps) + errNote(c32.gateway),
      ratio: ratio(c32.gateway.rps, c32.direct.rps),
      target: "gateway ≥ 5,000 req/s",
      pass: c32.gateway.rps >= 5000 && c32.gateway.errors === 0,
    },
    {
      metric: "Non-stream c=32: p50 latency",
      direct: ms(p(c32.direct, 50)),
      gateway: ms(p(c32.gateway, 50)),
      ratio: ratio(p(c32.gateway, 50), p(c32.direct, 50)),
    },
    {
      metric: "Non-stream c=32: p99 latency",
      direct: ms(p(c32.direct, 99)),
      gateway: ms(p(c32.gateway, 99)),
      ratio: ratio(p(c32.gateway, 99), p(c32.direct, 99)),
    },
  );

  const gwCpu = cpuMs(c32.gateway, "gateway");
  rows.push(
    {
      metric: "Non-stream c=32: CPU per request (gateway process / simulator process)",
      direct: `sim ${ms(cpuMs(c32.direct, "sim"))}`,
      gateway: `gw ${ms(gwCpu)} (+ sim ${ms(cpuMs(c32.gateway, "sim"))})`,
    },
    {
      metric: "Implied gateway capacity with one dedicated core (1000 / CPU ms per request)",
      gateway: `${num(1000 / gwCpu)} req/s`,
      target: "informational (contention-free estimate)",
    },
  );

  return rows;
}
