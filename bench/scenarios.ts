/** The HTTP scenarios: direct-to-simulator vs through-the-gateway, and 1,000 open streams. */
import { type CpuUse, formatCpu, withCpu } from "./cpu.ts";
import { holdStreams, type LoadResult, percentile, runLoad } from "./load.ts";
import { memoryOf, type Proc } from "./procs.ts";
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

const PATH = "/v1/chat/completions";
const chat = (content: string, stream: boolean) =>
  JSON.stringify({ model: "k3", stream, messages: [{ role: "user", content }] });

function endpoints(t: Targets) {
  const json = { "content-type": "application/json" };
  return {
    direct: { url: t.sim.url + PATH, headers: { ...json, authorization: "Bearer up-alpha" } },
    gateway: { url: t.gw.url + PATH, headers: { ...json, authorization: `Bearer ${t.key}` } },
  };
}

async function pair(t: Targets, label: string, body: string, concurrency: number, seconds = t.seconds) {
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
const cpuMs = (r: LoadResult & { cpu: CpuUse }, name: string) =>
  (r.cpu.byName[name] ?? NaN) * r.wallMs / Math.max(1, r.completed);

const errNote = (r: LoadResult) => r.errors > 0 ? ` (${r.errors} errors)` : "";

/** Targets 1 and 2: non-streaming latency/throughput and streaming TTFB/throughput. */
export async function httpScenarios(t: Targets): Promise<Row[]> {
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

  t.log("streaming TTFB, c=1 (50 words)");
  const s1 = await pair(t, "stream c=1", chat("[[sim:words=50]] Tell me a story.", true), 1);
  const tt = (r: LoadResult, q: number) => percentile(r.ttfb, q);
  const addTtfb = tt(s1.gateway, 50) - tt(s1.direct, 50);
  rows.push(
    {
      metric: "Stream c=1: TTFB p50",
      direct: ms(tt(s1.direct, 50)),
      gateway: ms(tt(s1.gateway, 50)),
      ratio: ratio(tt(s1.gateway, 50), tt(s1.direct, 50)),
    },
    {
      metric: "Stream c=1: TTFB p99",
      direct: ms(tt(s1.direct, 99)),
      gateway: ms(tt(s1.gateway, 99)),
      ratio: ratio(tt(s1.gateway, 99), tt(s1.direct, 99)),
    },
    {
      metric: "Added TTFB c=1, p50 (gateway − direct)",
      gateway: ms(addTtfb),
      target: "< 2 ms",
      pass: addTtfb < 2,
    },
  );

  const words = 500;
  t.log(`stream throughput, c=32 (${words} words each)`);
  const s32 = await pair(t, "stream c=32", chat(`[[sim:words=${words}]] Tell me a long story.`, true), 32);
  const mbps = (r: LoadResult) => r.bytes / r.seconds / 1e6;
  rows.push(
    {
      metric: `Stream c=32 (${words} words): streams/s`,
      direct: num(s32.direct.rps),
      gateway: num(s32.gateway.rps) + errNote(s32.gateway),
      ratio: ratio(s32.gateway.rps, s32.direct.rps),
    },
    {
      metric: `Stream c=32: output tokens/s`,
      direct: num(s32.direct.rps * words),
      gateway: num(s32.gateway.rps * words),
      ratio: ratio(s32.gateway.rps, s32.direct.rps),
    },
    {
      metric: `Stream c=32: body MB/s received`,
      direct: num(mbps(s32.direct), 1),
      gateway: num(mbps(s32.gateway), 1),
      ratio: ratio(mbps(s32.gateway), mbps(s32.direct)),
    },
    {
      metric: `Stream c=32: full-stream p50`,
      direct: ms(p(s32.direct, 50)),
      gateway: ms(p(s32.gateway, 50)),
      ratio: ratio(p(s32.gateway, 50), p(s32.direct, 50)),
    },
  );
  return rows;
}

/** Target 3: 1,000 streams held open at once through the gateway; gateway RSS meanwhile. */
export async function holdScenario(t: Targets, n = 1000): Promise<Row[]> {
  const { gateway } = endpoints(t);
  const interval = 250, words = 36;
  const before = await memoryOf(t.gw.pid);
  t.log(
    `${n} concurrent streams (interval ${interval} ms × ${words} words); gateway RSS before: ${
      num(before.rssKiB / 1024, 1)
    } MB`,
  );
  let peakRss = 0;
  const body = chat(`[[sim:interval=${interval}]][[sim:words=${words}]] Keep talking slowly.`, true);
  const [r, use] = await withCpu(
    { client: Deno.pid, gateway: t.gw.pid, sim: t.sim.pid },
    () =>
      holdStreams(n, gateway.url, gateway.headers, body, async () => {
        for (let i = 0; i < 15; i++) {
          peakRss = Math.max(peakRss, (await memoryOf(t.gw.pid)).rssKiB);
          await new Promise((res) => setTimeout(res, 100));
        }
      }),
  );
  t.cpu.push({ label: `gateway ${n} held streams`, use });
  const after = await memoryOf(t.gw.pid);
  t.log(
    `  opened ${r.opened}, peak open ${r.peakOpen}, completed ${r.completed}, errors ${r.errors}` +
      `${r.firstError ? ` (first: ${r.firstError})` : ""}; ramp ${ms(r.rampMs)}; RSS while held ${
        num(peakRss / 1024, 1)
      } MB`,
  );
  const held = r.peakOpen === n && r.errors === 0;
  const mb = peakRss / 1024;
  return [
    {
      metric: `${n} streams held at once (peak open / completed / errors)`,
      gateway: `${r.peakOpen} / ${r.completed} / ${r.errors}`,
      target: `${n} open at once, 0 errors`,
      pass: held,
    },
    {
      metric: `Gateway RSS with ${n} open streams`,
      gateway: held ? `${num(mb, 1)} MB` : "n/a (not all open)",
      target: "< 300 MB",
      pass: held && mb < 300,
    },
    {
      metric: "Gateway RSS idle before / after the hold",
      gateway: `${num(before.rssKiB / 1024, 1)} / ${num(after.rssKiB / 1024, 1)} MB`,
    },
    { metric: "Gateway peak RSS over the whole run (VmHWM)", gateway: `${num(after.hwmKiB / 1024, 1)} MB` },
  ];
}
