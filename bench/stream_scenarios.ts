/**
 * Streaming TTFB at one connection (direct, bare Deno proxy, gateway) under two upstream shapes, and 1,000
 * held streams on a fresh gateway process: what a fetch client measures and wrk cannot (a first body chunk).
 */
import { type CpuUse, withCpu } from "./cpu.ts";
import { holdStreams, type LoadResult, percentile } from "./load.ts";
import { memoryOf, type Proc } from "./procs.ts";
import { ms, num, ratio, type Row } from "./report.ts";
import { chat, errNote, FLOOR, pair, PATH, type Targets } from "./scenarios.ts";

const tt = (r: LoadResult, q: number) => percentile(r.ttfb, q);
const perStream = (r: LoadResult) => r.requests ? r.chunks / r.requests : NaN;

/**
 * TTFB at one connection, two upstream shapes: "paced" (frames 2 ms apart, as a model emits
 * tokens) and "burst" (the whole 50-word answer arrives in one upstream read).
 */
async function ttfb(t: Targets, label: string, content: string): Promise<Row[]> {
  t.log(`streaming TTFB, c=1, ${label}`);
  const s = await pair(t, `stream c=1 ${label}`, chat(content, true), 1);
  const add = tt(s.gateway, 50) - tt(s.direct, 50);
  return [
    {
      metric: `Stream c=1 ${label}: TTFB p50`,
      direct: ms(tt(s.direct, 50)),
      bare: ms(tt(s.bare, 50)) + errNote(s.bare),
      gateway: ms(tt(s.gateway, 50)) + errNote(s.gateway),
      ratio: ratio(tt(s.gateway, 50), tt(s.direct, 50)),
    },
    {
      metric: `Stream c=1 ${label}: TTFB p99`,
      direct: ms(tt(s.direct, 99)),
      bare: ms(tt(s.bare, 99)),
      gateway: ms(tt(s.gateway, 99)),
      ratio: ratio(tt(s.gateway, 99), tt(s.direct, 99)),
    },
    {
      metric: `Stream c=1 ${label}: body chunks per stream received by the client`,
      direct: num(perStream(s.direct), 1),
      bare: num(perStream(s.bare), 1),
      gateway: num(perStream(s.gateway), 1),
    },
    {
      metric: `Added TTFB c=1 ${label}, p50 (gateway − direct)`,
      gateway: ms(add),
      target: "< 2 ms",
      pass: add < 2 && s.gateway.errors === 0,
    },
    {
      metric: `Added TTFB of the bare proxy c=1 ${label}, p50 (bare − direct)`,
      bare: ms(tt(s.bare, 50) - tt(s.direct, 50)),
      target: FLOOR,
    },
    {
      metric: `Gateway added TTFB beyond the bare proxy c=1 ${label}, p50 (gateway − bare)`,
      gateway: ms(tt(s.gateway, 50) - tt(s.bare, 50)),
      target: FLOOR,
    },
  ];
}

export async function streamScenarios(t: Targets): Promise<Row[]> {
  return [
    ...await ttfb(t, "paced (6 words, 2 ms apart)", "[[sim:interval=2]][[sim:words=6]] Tell me a story."),
    ...await ttfb(t, "burst (50 words)", "[[sim:words=50]] Tell me a story."),
  ];
}

export interface HoldTargets {
  sim: Proc;
  /** A gateway process started just for the hold, after the load scenarios. */
  gw: Proc;
  key: string;
  log: (s: string) => void;
  cpu: { label: string; use: CpuUse }[];
  /** VmHWM (KiB) of the gateway that served the load scenarios, for the whole-run peak row. */
  loadGatewayHwmKiB: number;
}

/** Target 3: 1,000 streams held open at once through a fresh gateway; its RSS meanwhile. */
export async function holdScenario(t: HoldTargets, n = 1000): Promise<Row[]> {
  const url = t.gw.url + PATH;
  const headers = { "content-type": "application/json", authorization: `Bearer ${t.key}` };
  const interval = 250, words = 36;
  const before = await memoryOf(t.gw.pid);
  t.log(
    `${n} concurrent streams (interval ${interval} ms × ${words} words) on a fresh gateway (pid ${t.gw.pid}); ` +
      `RSS before: ${num(before.rssKiB / 1024, 1)} MB`,
  );
  let peakRss = 0;
  const body = chat(`[[sim:interval=${interval}]][[sim:words=${words}]] Keep talking slowly.`, true);
  const [r, use] = await withCpu(
    { client: Deno.pid, gateway: t.gw.pid, sim: t.sim.pid },
    () =>
      holdStreams(n, url, headers, body, async () => {
        for (let i = 0; i < 15; i++) {
          peakRss = Math.max(peakRss, (await memoryOf(t.gw.pid)).rssKiB);
          await new Promise((res) => setTimeout(res, 100));
        }
      }),
  );
  t.cpu.push({ label: `gateway ${n} held streams (fresh process)`, use });
  const after = await memoryOf(t.gw.pid);
  t.log(
    `  opened ${r.opened}, peak open ${r.peakOpen}, completed ${r.completed}, errors ${r.errors}` +
      `${r.firstError ? ` (first: ${r.firstError})` : ""}; ramp ${ms(r.rampMs)}; RSS while held ${
        num(peakRss / 1024, 1)
      } MB, after ${num(after.rssKiB / 1024, 1)} MB, VmHWM ${num(after.hwmKiB / 1024, 1)} MB`,
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
      gateway: `${num(before.rssKiB / 1024, 1)} / ${num(after.rssKiB / 1024, 1)} MB (fresh process)`,
    },
    {
      metric: "Gateway peak RSS over the whole run (VmHWM)",
      gateway: `load scenarios ${num(t.loadGatewayHwmKiB / 1024, 1)} MB; hold (fresh process) ${
        num(after.hwmKiB / 1024, 1)
      } MB`,
    },
  ];
}
