/** The Markdown of the side-by-side section (bench/side_by_side.ts) and the figures it shows. */
import type { CpuUse } from "./cpu.ts";
import {
  FD_MARGIN,
  perStreamKiB,
  projectedMiB,
  type ProxyHold,
  settledPerStreamKiB,
} from "./idle_streams.ts";
import { type LoadResult, percentile } from "./load.ts";
import type { CoreSplit } from "./affinity.ts";
import { STREAM_FRAMES } from "./chat_mock.ts";
import { type Proc, START_ENV } from "./procs.ts";
import type { SelfTime } from "./profile.ts";
import { grid, ms, num } from "./report.ts";
import { SIDE_HEADING } from "./sections.ts";
import type { WrkResult } from "./wrk.ts";

export type Side = "direct" | "bare" | "gateway";
export const SIDES: Side[] = ["direct", "bare", "gateway"];
export const NAME: Record<Side, string> = {
  direct: "direct to the mock",
  bare: "bare Deno proxy",
  gateway: "this gateway",
};
/** The idle-stream hold of a gateway without the per-connection server (docs/operator-guide.md). */
export const PLAIN_HOLD = "this gateway, HTTP_CONNECTION_DEADLINES=off";
/** The idle-stream hold of the bare proxy with one JavaScript stream hop (bench/bare_proxy.ts PUMP=byob). */
export const JS_HOP_HOLD = "bare Deno proxy, one JavaScript stream hop (PUMP=byob)";
/** The same behind the gateway's per-connection listener (bench/bare_proxy.ts SERVE=deadlines). */
export const JS_HOP_DEADLINES_HOLD =
  "bare Deno proxy, one JavaScript stream hop, per-connection listener (SERVE=deadlines)";
/** The server process whose CPU a side's figures are: the mock's own, or the proxy's. */
export const SERVER: Record<Side, "mock" | "bare" | "gateway"> = {
  direct: "mock",
  bare: "bare",
  gateway: "gateway",
};

export const CONNECTIONS = 32;
/** The bare proxy whose JSON answer carries the header fields spec §2.5 asks for (bare_proxy.ts ANSWER_HEAD=spec-chunked). */
export const SPEC_HEAD_NAME = "bare Deno proxy with spec §2.5's answer head";
/** Cut from each end of the profile's load window (the profile's clock starts a little after the spawn). */
export const PROFILE_TRIM_MS = 250;
/** The gateway's performance targets, each against the bare proxy in the same run (docs/performance.md). */
export const TARGET = {
  /** Requests (streams) per second at c=32: at least this share of the bare proxy's. */
  rateShare: 1.0,
  /** CPU per request (per stream): at most this multiple of the bare proxy's. */
  cpuShare: 1.1,
  /** c=1 added p50 (JSON, stream TTFB): at most the bare proxy's plus this. */
  addOverBareMs: 0.1,
  /** Peak RSS during the c=32 runs (JSON, streams): at most this multiple of the bare proxy's. */
  rssShare: 1.5,
  /** RSS after the rest that follows the load: at most the idle RSS plus this. */
  restedOverIdleMiB: 50,
  /** 10,000 idle streams: RSS under this, 1 GiB (and, a row of its own, at most streamKiB per stream). */
  rssMiB: 1024,
  streamKiB: 90,
};

export interface SideOptions {
  seconds: number;
  /** Alternated rounds of the c=32 loads (each side in turn per round); a row shows the median round. */
  rounds: number;
  warmup: number;
  streams: number;
  /** How long the idle streams are held before their RSS is read again (V8 collects the ramp's garbage). */
  settleMs: number;
  /** How long the proxies rest after the last c=32 stream round before their RSS is read again. */
  restMs: number;
  log: (s: string) => void;
  /** Processes started here are added, so the caller's signal handler stops them too. */
  procs: Proc[];
  command: string;
}

export interface Loaded {
  wrk: WrkResult;
  cpu: CpuUse;
  wallMs: number;
  /** The highest RSS of the side's server process during the run (bench/rss_sampler.ts). */
  peakRssKiB: number;
}

/** A proxy's RSS outside the c=32 runs: before any load, before the stream rounds, after the rest past them. */
export interface MemoryRun {
  idleKiB: number;
  streamStartKiB: number;
  restedKiB: number;
}

/** A side's one-connection rounds. */
export interface OneConnection {
  /** The c=1 JSON rounds' figures together (medianLatencies); every round in `json1Rounds`. */
  json1: WrkResult;
  json1Rounds: WrkResult[];
  /** Every c=1 stream round's samples together (load.ts pooledLoads); every round in `ttfb1Rounds`. */
  ttfb1: LoadResult;
  ttfb1Rounds: LoadResult[];
}

/**
 * A side's figures. Its one-connection ones are from the rounds with each proxy on a core of its own (the
 * load and the mock on the others: bench/affinity.ts); `shared` holds the rounds with every process on any
 * core. On a machine where the cores cannot be split, the one-connection figures are the shared rounds' and
 * `shared` is absent.
 */
export interface SideRuns extends OneConnection {
  /** The round with the median rate of `rounds` (medianRound). */
  json32: Loaded;
  stream32: Loaded;
  /** Every c=32 round, in the order run. */
  rounds: Record<"json32" | "stream32", Loaded[]>;
  shared?: OneConnection;
  /** SSE frames one stream brought the client (checked before the load). */
  frames: number;
  /** The proxies' RSS outside the runs (bare and gateway only). */
  memory?: MemoryRun;
}

/** The JSON rounds at c=32 of the bare proxy with spec §2.5's answer head: its CPU under the name `bare`. */
export interface SpecHeadRuns {
  json32: Loaded;
  rounds: Loaded[];
}

/** The highest RSS of a side's server over every c=32 round of a load, KiB. */
export const peakRss = (r: SideRuns, kind: "json32" | "stream32") =>
  Math.max(...r.rounds[kind].map((l) => l.peakRssKiB));

/** The figures the targets judge, gateway and bare proxy, from one run. */
export interface Judged {
  rps: Record<"json" | "stream", { gateway: number; bare: number }>;
  /** CPU ms per request (per stream). */
  cpuMs: Record<"json" | "stream", { gateway: number; bare: number }>;
  /** c=1 added p50 over direct, ms: each proxy on a core of its own. */
  add50: Record<"json" | "ttfb", { gateway: number; bare: number }>;
  /** The same with every process on any core (the load, the mock and the proxy placed by the kernel). */
  add50Shared?: Record<"json" | "ttfb", { gateway: number; bare: number }>;
  /** Peak RSS during the c=32 runs, KiB. */
  peakKiB: Record<"json" | "stream", { gateway: number; bare: number }>;
  memory: { gateway: MemoryRun; bare: MemoryRun };
  /** The bare proxy with spec §2.5's answer head, JSON at c=32: requests/s and CPU ms per request. */
  specHead?: { rps: number; cpuMs: number };
}

export interface Verdict {
  target: string;
  gateway: string;
  bare: string;
  ok: boolean;
}

/** Each target of docs/performance.md against the bare proxy's figure in the same run. */
export function judge(f: Judged): Verdict[] {
  const mib = (kib: number) => `${num(kib / 1024, 1)} MiB`;
  const share = (k: "json" | "stream", unit: string): Verdict => ({
    target: `${k === "json" ? "JSON" : "Streams"}: ≥ ${
      TARGET.rateShare.toFixed(1)
    }× the bare proxy's ${unit} at c=32`,
    gateway: `${x(f.rps[k].gateway, f.rps[k].bare)} (${num(f.rps[k].gateway)} / ${num(f.rps[k].bare)})`,
    bare: num(f.rps[k].bare),
    ok: f.rps[k].gateway >= TARGET.rateShare * f.rps[k].bare,
  });
  const cpu = (k: "json" | "stream"): Verdict => ({
    target: `CPU per ${k === "json" ? "request" : "stream"} ≤ ${TARGET.cpuShare}× the bare proxy's`,
    gateway: `${ms(f.cpuMs[k].gateway)} (${x(f.cpuMs[k].gateway, f.cpuMs[k].bare)})`,
    bare: ms(f.cpuMs[k].bare),
    ok: f.cpuMs[k].gateway <= TARGET.cpuShare * f.cpuMs[k].bare,
  });
  const rss = (k: "json" | "stream"): Verdict => ({
    target: `Peak RSS during the c=32 ${
      k === "json" ? "JSON" : "stream"
    } runs ≤ ${TARGET.rssShare}× the bare proxy's`,
    gateway: `${mib(f.peakKiB[k].gateway)} (${x(f.peakKiB[k].gateway, f.peakKiB[k].bare)})`,
    bare: mib(f.peakKiB[k].bare),
    ok: f.peakKiB[k].gateway <= TARGET.rssShare * f.peakKiB[k].bare,
  });
  const rested = (m: MemoryRun) =>
    `${mib(m.restedKiB)} (idle ${mib(m.idleKiB)}, +${mib(m.restedKiB - m.idleKiB)})`;
  const added = (target: string, a: Judged["add50"]): Verdict => ({
    target,
    gateway: `${signed(a.json.gateway)} / ${signed(a.ttfb.gateway)}`,
    bare: `${signed(a.json.bare)} / ${signed(a.ttfb.bare)}`,
    ok: a.json.gateway <= a.json.bare + TARGET.addOverBareMs &&
      a.ttfb.gateway <= a.ttfb.bare + TARGET.addOverBareMs,
  });
  const bound = `c=1 added p50 ≤ the bare proxy's + ${TARGET.addOverBareMs} ms: JSON / stream TTFB`;
  return [
    share("json", "requests/s"),
    share("stream", "streams/s"),
    cpu("json"),
    cpu("stream"),
    added(`${bound}${f.add50Shared ? " (each proxy on a core of its own)" : ""}`, f.add50),
    ...f.add50Shared
      ? [
        added(
          `The same with every process on any core (ours, beside the target: where the kernel places the load, the mock and the proxy)`,
          f.add50Shared,
        ),
      ]
      : [],
    rss("json"),
    rss("stream"),
    {
      target: `RSS after the rest past the load ≤ idle + ${TARGET.restedOverIdleMiB} MiB`,
      gateway: rested(f.memory.gateway),
      bare: rested(f.memory.bare),
      ok: f.memory.gateway.restedKiB - f.memory.gateway.idleKiB <= TARGET.restedOverIdleMiB * 1024,
    },
    ...f.specHead ? specHeadVerdicts(f, f.specHead) : [],
  ];
}

/** The JSON rate and CPU targets again, against the bare proxy that sends spec §2.5's answer head. */
function specHeadVerdicts(f: Judged, spec: { rps: number; cpuMs: number }): Verdict[] {
  const floor = `(${x(spec.rps, f.rps.json.bare)} and ${x(spec.cpuMs, f.cpuMs.json.bare)} the bare proxy's)`;
  return [
    {
      target: `JSON: ≥ ${TARGET.rateShare.toFixed(1)}× the requests/s at c=32 of the bare proxy with spec ` +
        "§2.5's answer head",
      gateway: `${x(f.rps.json.gateway, spec.rps)} (${num(f.rps.json.gateway)} / ${num(spec.rps)})`,
      bare: `${num(spec.rps)} ${floor}`,
      ok: f.rps.json.gateway >= TARGET.rateShare * spec.rps,
    },
    {
      target: `CPU per request ≤ ${TARGET.cpuShare}× that proxy's`,
      gateway: `${ms(f.cpuMs.json.gateway)} (${x(f.cpuMs.json.gateway, spec.cpuMs)})`,
      bare: ms(spec.cpuMs),
      ok: f.cpuMs.json.gateway <= TARGET.cpuShare * spec.cpuMs,
    },
  ];
}

export interface Profiled {
  load: "json" | "stream";
  file: string;
  top: SelfTime[];
  /** The gateway's own functions by total time (profile.ts topInclusive). */
  inclusive: SelfTime[];
  /** Self time by where the code comes from (profile.ts originOf). */
  origins: SelfTime[];
  busy: number;
  total: number;
  /** Cores each of the gateway's threads used over the window, by thread name. */
  threads: { name: string; cores: number }[];
  windowMs: number;
  wrk: WrkResult;
  cpu: CpuUse;
}

const LOAD = { json: "JSON", stream: "stream" } as const;
const UNIT = { json: "requests/s", stream: "streams/s" } as const;

/**
 * The round with the median rate (the lower middle one of an even count): one machine phase can move a single
 * 10 s window by ±5%, more than many changes the targets judge, so each side's rounds are alternated with the
 * others' and the middle one is shown whole (its latencies and CPU with it).
 */
export function medianRound(rounds: readonly Loaded[]): Loaded {
  if (rounds.length === 0) throw new RangeError("no rounds");
  const sorted = [...rounds].sort((a, b) => a.wrk.rps - b.wrk.rps);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/**
 * c=1 JSON rounds as one figure: the median of the rounds' p50s and, on its own, of their p99s (wrk gives
 * percentiles, not samples); requests and errors summed. A single 5 s run's p99 at one connection moves by
 * milliseconds (docs/performance.md, "The c=1 p99: the runtime's own tail").
 */
export function medianLatencies(rounds: readonly WrkResult[]): WrkResult {
  if (rounds.length === 0) throw new RangeError("no rounds");
  const mid = (f: (w: WrkResult) => number) =>
    rounds.map(f).sort((a, b) => a - b)[Math.floor((rounds.length - 1) / 2)]!;
  return {
    ...rounds[0]!,
    p50Ms: mid((w) => w.p50Ms),
    p99Ms: mid((w) => w.p99Ms),
    requests: rounds.reduce((n, w) => n + w.requests, 0),
    errors: rounds.reduce((n, w) => n + w.errors, 0),
  };
}

/** CPU ms a process spent per response of a run. */
export const cpuMsPer = (r: Loaded, name: string) => (r.cpu.byName[name] ?? NaN) * r.wallMs / r.wrk.requests;

const pass = (ok: boolean) => ok ? "PASS" : "**FAIL**";
const x = (a: number, b: number) => Number.isFinite(a / b) ? `${(a / b).toFixed(2)}×` : "n/a";
const signed = (v: number) => (v >= 0 ? "+" : "−") + ms(Math.abs(v));

export interface Rendered {
  o: SideOptions;
  commit: string;
  /** wrk's version line. */
  wrk: string;
  runs: Record<Side, SideRuns>;
  specHead: SpecHeadRuns;
  /** Usage rows the gateway committed over its measured runs (billing on). */
  rows: number;
  /** A profile per load, or why there is none. */
  profiled: Record<"json" | "stream", Profiled | string>;
  holds: ProxyHold[];
  /** How the one-connection rounds' cores were split (bench/affinity.ts), or why they were not. */
  cores: CoreSplit | string;
}

/** A side's c=1 latency minus direct's, from the rounds `c` picks (own core, or shared). */
function addedOf(runs: Record<Side, SideRuns>, c: (r: SideRuns) => OneConnection, side: Side, q: 50 | 99) {
  const at = (s: Side) => c(runs[s]);
  return {
    json: q === 50
      ? at(side).json1.p50Ms - at("direct").json1.p50Ms
      : at(side).json1.p99Ms - at("direct").json1.p99Ms,
    ttfb: percentile(at(side).ttfb1.ttfb, q) - percentile(at("direct").ttfb1.ttfb, q),
  };
}

export function render({ o, commit, wrk, runs, specHead, rows, profiled, holds, cores }: Rendered): string {
  const cpu = (side: Side, kind: "json32" | "stream32") => {
    const own = cpuMsPer(runs[side][kind], SERVER[side]);
    return side === "direct" ? ms(own) : `${ms(own)} (+ mock ${ms(cpuMsPer(runs[side][kind], "mock"))})`;
  };
  const ttfb = (side: Side, q: number) => percentile(runs[side].ttfb1.ttfb, q);
  const add = (side: Side, q: 50 | 99) => addedOf(runs, (r) => r, side, q);
  const shared = SIDES.every((side) => runs[side].shared)
    ? (side: Side) => addedOf(runs, (r) => r.shared!, side, 50)
    : undefined;
  const errors = (side: Side) => {
    const r = runs[side];
    const c1 = (c: OneConnection | undefined) => c ? c.json1.errors + c.ttfb1.errors : 0;
    return String(r.json32.wrk.errors + r.stream32.wrk.errors + c1(r) + c1(r.shared));
  };
  const main = grid(
    [
      "Target",
      "JSON req/s (c=32)",
      "CPU ms per request",
      "Streams/s (c=32)",
      "CPU ms per stream",
      "c=1 JSON p50 / p99",
      "c=1 stream TTFB p50 / p99",
      "c=1 added p50: JSON / TTFB",
      "c=1 added p99: JSON / TTFB",
      "Errors",
    ],
    SIDES.map((side) => {
      const r = runs[side];
      const a50 = add(side, 50), a99 = add(side, 99);
      return [
        side === "gateway" ? `**${NAME[side]}**` : NAME[side],
        num(r.json32.wrk.rps),
        cpu(side, "json32"),
        num(r.stream32.wrk.rps),
        cpu(side, "stream32"),
        `${ms(r.json1.p50Ms)} / ${ms(r.json1.p99Ms)}`,
        `${ms(ttfb(side, 50))} / ${ms(ttfb(side, 99))}`,
        side === "direct" ? "–" : `${signed(a50.json)} / ${signed(a50.ttfb)}`,
        side === "direct" ? "–" : `${signed(a99.json)} / ${signed(a99.ttfb)}`,
        errors(side),
      ];
    }).concat([[
      SPEC_HEAD_NAME,
      num(specHead.json32.wrk.rps),
      `${ms(cpuMsPer(specHead.json32, "bare"))} (+ mock ${ms(cpuMsPer(specHead.json32, "mock"))})`,
      ...Array(6).fill("—"),
      String(specHead.json32.wrk.errors),
    ]]),
    [false, true, true, true, true, true, true, true, true, true],
  );

  const g = runs.gateway, b = runs.bare;
  const both = (f: (r: SideRuns, side: "gateway" | "bare") => number) => ({
    gateway: f(g, "gateway"),
    bare: f(b, "bare"),
  });
  const verdicts = judge({
    rps: { json: both((r) => r.json32.wrk.rps), stream: both((r) => r.stream32.wrk.rps) },
    cpuMs: {
      json: both((r, side) => cpuMsPer(r.json32, side)),
      stream: both((r, side) => cpuMsPer(r.stream32, side)),
    },
    add50: { json: both((_, side) => add(side, 50).json), ttfb: both((_, side) => add(side, 50).ttfb) },
    ...shared
      ? {
        add50Shared: {
          json: both((_, side) => shared(side).json),
          ttfb: both((_, side) => shared(side).ttfb),
        },
      }
      : {},
    peakKiB: { json: both((r) => peakRss(r, "json32")), stream: both((r) => peakRss(r, "stream32")) },
    memory: { gateway: g.memory!, bare: b.memory! },
    specHead: { rps: specHead.json32.wrk.rps, cpuMs: cpuMsPer(specHead.json32, "bare") },
  });
  const hold = holds.find((h) => h.name === NAME.gateway)!;
  const plainHold = holds.find((h) => h.name === PLAIN_HOLD);
  const bareHold = holds.find((h) => h.name === NAME.bare)!;
  const jsHopHold = holds.find((h) => h.name === JS_HOP_HOLD);
  const jsHopDeadlinesHold = holds.find((h) => h.name === JS_HOP_DEADLINES_HOLD);
  const targets = grid(
    ["Target", "Gateway", "Bare Deno proxy (the floor)", "Result"],
    [
      ...verdicts.map((v) => [v.target, v.gateway, v.bare, pass(v.ok)]),
      [
        `${num(hold.requested)} idle streams < 1 GiB gateway RSS (${num(TARGET.rssMiB)} MiB)`,
        holdSummary(hold),
        `${num(projectedMiB(bareHold), 1)} MiB at ${num(bareHold.requested)} (${
          num(perStreamKiB(bareHold), 1)
        } KiB per stream)`,
        pass(holdOk(hold) && projectedMiB(hold) < TARGET.rssMiB),
      ],
      [
        `The same, ≤ ${TARGET.streamKiB} KiB per stream`,
        `${num(perStreamKiB(hold), 1)} KiB`,
        jsHopHold ? `${num(perStreamKiB(jsHopHold), 1)} KiB with one JavaScript stream hop` : "—",
        pass(holdOk(hold) && perStreamKiB(hold) <= TARGET.streamKiB),
      ],
      ...(plainHold
        ? [[
          `The same with HTTP_CONNECTION_DEADLINES=off (a proxy in front bounds connections)`,
          holdSummary(plainHold),
          "—",
          pass(holdMet(plainHold)),
        ]]
        : []),
      ...(jsHopHold
        ? [[
          `The same through the bare proxy with one JavaScript stream hop (the least a proxy that reads the ` +
          "frames holds)",
          "—",
          holdSummary(jsHopHold),
          pass(holdMet(jsHopHold)),
        ]]
        : []),
      ...(jsHopDeadlinesHold
        ? [[
          "The same behind the gateway's per-connection listener (the least the gateway with its connection " +
          "deadlines holds)",
          "—",
          holdSummary(jsHopDeadlinesHold),
          pass(holdMet(jsHopDeadlinesHold)),
        ]]
        : []),
    ],
  );
  const mib = (kib: number) => `${num(kib / 1024, 1)} MiB`;
  const memoryTable = grid(
    [
      "Process",
      "RSS idle",
      "JSON c=32: peak",
      "Streams c=32: at start → peak",
      `${num(o.restMs / 1000)} s after the last stream round`,
    ],
    (["bare", "gateway"] as const).map((side) => {
      const r = runs[side], m = r.memory!;
      return [
        NAME[side],
        mib(m.idleKiB),
        mib(peakRss(r, "json32")),
        `${mib(m.streamStartKiB)} → ${mib(peakRss(r, "stream32"))}`,
        mib(m.restedKiB),
      ];
    }),
    [false, true, true, true, true],
  );

  const holdTable = grid(
    [
      "Process",
      "Streams open (attempted / asked)",
      "RSS idle",
      "RSS with all open",
      "KiB per stream",
      `RSS projected at ${num(o.streams)}`,
      `KiB per stream after ${num(o.settleMs / 1000)} s idle`,
      "Ramp",
      "Open fds: idle / all open / 3 s after close",
    ],
    holds.map((h) => [
      h.name,
      `${num(h.opened)} (${num(h.attempted)} / ${num(h.requested)})${h.errors ? `, ${h.errors} errors` : ""}`,
      `${num(h.idleKiB / 1024, 1)} MiB`,
      `${num(h.openKiB / 1024, 1)} MiB`,
      num(perStreamKiB(h), 1),
      `${num(projectedMiB(h), 1)} MiB`,
      settledPerStreamKiB(h) === undefined ? "—" : num(settledPerStreamKiB(h)!, 1),
      `${num(h.rampMs / 1000, 1)} s`,
      `${num(h.fds.idle)} / ${num(h.fds.open)} / ${num(h.fds.after)}`,
    ]),
    [false, true, true, true, true, true, true, true, true],
  );

  const cpuRows: string[][] = [];
  for (const kind of ["json32", "stream32"] as const) {
    for (const side of SIDES) {
      const r = runs[side][kind];
      const c = (n: string) => (r.cpu.byName[n] ?? 0).toFixed(2);
      const wrkCores = r.wrk.clientCpuMs / r.wallMs;
      cpuRows.push([
        `${kind === "json32" ? "JSON" : "stream"} c=32, ${NAME[side]}`,
        wrkCores.toFixed(2),
        c("mock"),
        c("bare"),
        c("gateway"),
        r.cpu.irq.toFixed(2),
        Math.max(0, r.cpu.other - wrkCores).toFixed(2),
      ]);
    }
  }
  for (const r of [specHead.json32]) {
    const wrkCores = r.wrk.clientCpuMs / r.wallMs;
    cpuRows.push([
      `JSON c=32, ${SPEC_HEAD_NAME}`,
      wrkCores.toFixed(2),
      (r.cpu.byName.mock ?? 0).toFixed(2),
      (r.cpu.byName.bare ?? 0).toFixed(2),
      "—",
      r.cpu.irq.toFixed(2),
      Math.max(0, r.cpu.other - wrkCores).toFixed(2),
    ]);
  }
  for (const p of Object.values(profiled)) {
    if (typeof p === "string") continue;
    const c = (n: string) => (p.cpu.byName[n] ?? 0).toFixed(2);
    const wrkCores = p.wrk.clientCpuMs / p.windowMs;
    cpuRows.push([
      `${LOAD[p.load]} c=${CONNECTIONS}, gateway with --cpu-prof`,
      wrkCores.toFixed(2),
      c("mock"),
      "—",
      c("gateway"),
      p.cpu.irq.toFixed(2),
      Math.max(0, p.cpu.other - wrkCores).toFixed(2),
    ]);
  }
  const cpuTable = grid(
    ["Run", "wrk", "Mock", "Bare proxy", "Gateway", "Kernel irq/softirq", "Other processes"],
    cpuRows,
    [false, true, true, true, true, true, true],
  );
  const maxOther = Math.max(...cpuRows.map((r) => Number(r[6])));
  // A target the runtime itself misses: no Deno proxy meets it on this machine, whatever its logic.
  const floorMisses = [
    ...perStreamKiB(bareHold) > TARGET.streamKiB
      ? [`idle stream (${num(perStreamKiB(bareHold), 1)} KiB)`]
      : [],
    ...jsHopHold && !holdMet(jsHopHold)
      ? [`idle stream with one JavaScript stream hop (${num(perStreamKiB(jsHopHold), 1)} KiB)`]
      : [],
    ...jsHopDeadlinesHold && !holdMet(jsHopDeadlinesHold)
      ? [
        `idle stream with one JavaScript stream hop behind the per-connection listener (${
          num(perStreamKiB(jsHopDeadlinesHold), 1)
        } KiB)`,
      ]
      : [],
  ];

  const lines = [
    `## ${SIDE_HEADING}`,
    "",
    `Command: \`${o.command}\` (from the repository root)`,
    "",
    `- Measured: ${commit}`,
    `- Date: ${
      new Date().toISOString()
    }; ${navigator.hardwareConcurrency} CPUs, shared by wrk, the mock and the ` +
    `proxy under test (at c=1 see below); deno ${Deno.version.deno} (v8 ${Deno.version.v8}); ${wrk}`,
    `- Load: wrk 2 threads × ${CONNECTIONS} keep-alive connections, ${o.warmup} s warm-up then ${o.seconds} s ` +
    `measured per c=32 round, ${o.rounds} round${
      o.rounds === 1 ? "" : "s"
    } of each load with the three sides ` +
    "in turn; a c=32 row shows its side's round with the median rate (every round below the tables); " +
    `c=1, in as many rounds: wrk 1 connection for ${Math.max(1, o.seconds / 2)} s (JSON; its p50 and p99 ` +
    `the medians of the rounds'), a Deno fetch loop for 1 + ${
      Math.max(1, o.seconds / 2)
    } s (stream time to first body byte; percentiles over every round's streams). ${placement(cores)} ` +
    "Every process on loopback.",
    "- Upstream: bench/chat_mock.ts, one fixed `chat.completion` JSON, or one fixed SSE stream of " +
    `${STREAM_FRAMES} frames (20 content chunks, the finish chunk, the usage chunk, \`[DONE]\`), each frame its ` +
    "own body chunk, all queued at once. Gateway: `main.ts` with the start task's variables (" +
    `${Object.entries(START_ENV).map(([k, v]) => `\`${k}=${v}\``).join(", ")}; deno.json) on a KV file ` +
    "(its default store), model `k3` " +
    "(native Chat pass-through), billing on (one key with 100,000 USD; every request reserves and settles).",
    `- Frames per stream the client received: ${SIDES.map((s) => `${NAME[s]} ${runs[s].frames}`).join(", ")}${
      runs.gateway.frames === STREAM_FRAMES - 1
        ? " (the gateway always asks the upstream for the usage chunk and passes it on only to a client that " +
          "asks for `stream_options.include_usage`, which this load does not)"
        : ""
    }. Usage rows the gateway committed over its runs: ${
      num(rows)
    } (responses wrk and the fetch loop counted ` +
    `through it: ${
      num(
        [...g.rounds.json32, ...g.rounds.stream32].reduce((n, r) => n + r.wrk.requests, 0) +
          g.json1.requests + g.ttfb1.completed +
          (g.shared ? g.shared.json1.requests + g.shared.ttfb1.completed : 0),
      )
    }; wrk's warm-ups, the check stream and requests cut at a run's end are billed too).`,
    "",
    main,
    "",
    targets,
    "",
    roundsLine(runs, specHead),
    "",
    `RSS of the two proxies (VmRSS, /proc; during a c=32 run every 200 ms, the table's peak the highest over ` +
    `its ${o.rounds} rounds; both processes serve every round, JSON first; the rest follows the gateway's last ` +
    "stream round, the bare proxy's came one side earlier):",
    "",
    memoryTable,
    "",
    `Idle streams (the mock sends the first content chunk, then nothing while the client is connected); a fresh ` +
    "process of each proxy, raw HTTP/1.1 client connections opened 500 at a time (bench/idle_streams.ts). " +
    "RSS with all open is the highest sampled in the second after the last one opened — what the targets are " +
    "judged on; the streams are then held idle and the RSS read again: a Deno process frees the garbage of " +
    "the ramp only when V8's memory reducer runs, some seconds after the allocations stop:",
    "",
    holdTable,
    "",
    "CPU over each measured window (cores; 2 available):",
    "",
    cpuTable,
    "",
    "### Where the time goes",
    "",
    ...whereTimeGoes("json", profiled.json, o),
    ...whereTimeGoes("stream", profiled.stream, o),
    "Notes:",
    "",
    ...specHeadNote(runs, specHead),
    ...maxOther > 0.2
      ? [
        `- Other processes on the machine used up to ${
          maxOther.toFixed(2)
        } of the cores during a measured window (CPU table): that row's figures are pessimistic.`,
      ]
      : [],
    ...floorMisses.length
      ? [
        `- The bare Deno proxy itself misses the ${floorMisses.join(" and the ")} target: out of reach for ` +
        "any Deno proxy of its kind on this machine, whatever its logic (the gateway reads every frame, so it " +
        "has at least the JavaScript hop); judge the gateway there against the bare proxy.",
      ]
      : [],
    "- A Deno proxy's p99 at one connection moves by milliseconds from run to run (the bare proxy +0.9 to +3.4 " +
    "ms in recorded runs), so the c=1 JSON p99 is the median of the rounds' own; why it is the runtime's tail: " +
    'docs/performance.md, "The c=1 p99: the runtime\'s own tail".',
    "- CPU per request (per stream) is the process's utime + stime from /proc/<pid>/stat over the measured " +
    "window, divided by the responses wrk completed in it. 'Added' is the side's minus direct's at one " +
    "connection; the JSON latency is wrk's (request written → response read), the stream's is the time to its " +
    "first body chunk in a Deno fetch client, the same client for all three.",
    "- Idle streams: every proxied stream is two sockets in the proxy (client side, upstream side), so a proxy " +
    `holds at most (its open-file limit − its idle descriptors − ${FD_MARGIN}) / 2 streams. The proxies and the ` +
    `mock are started with their open-file limit raised to ${num(2 * o.streams + 1024)} (\`ulimit -n\`) ` +
    `where it is lower; a hard limit the shell may not raise (no CAP_SYS_RESOURCE) stays: here ${
      num(hold.fdLimit)
    }. When the streams that fit ` +
    "are fewer than those asked for, the RSS at the asked count is projected from the idle RSS and the KiB per " +
    "stream measured. RSS with all open is the highest VmRSS of 10 samples 100 ms apart.",
    "",
  ];
  return lines.join("\n");
}

/**
 * What the answer head spec §2.5 asks for costs the runtime: any answer with a header field besides its content
 * type leaves Deno 2.9's fast path for a static answer (docs/performance.md, "The answer's head").
 */
function specHeadNote(runs: Record<Side, SideRuns>, specHead: SpecHeadRuns): string[] {
  const bare = runs.bare.json32, spec = specHead.json32;
  const rate = spec.wrk.rps / bare.wrk.rps;
  if (rate >= TARGET.rateShare) return [];
  return [
    `- The bare Deno proxy answering with the head spec §2.5 asks of every answer (request-id and, family alpha, ` +
    `x-request-id; chunked, one write, as the gateway sends it) reaches ${
      x(spec.wrk.rps, bare.wrk.rps)
    } the ` +
    `bare proxy's JSON rate at ${
      x(cpuMsPer(spec, "bare"), cpuMsPer(bare, "bare"))
    } its CPU per request: with ` +
    "any header field besides the content type, Deno 2.9 leaves its fast path for a static answer (docs/" +
    'performance.md, "The answer\'s head"). No gateway on this spec meets the JSON rate target against the bare ' +
    "proxy on this runtime; the two rows after the table's targets judge the gateway against that proxy.",
  ];
}

function whereTimeGoes(load: "json" | "stream", p: Profiled | string, o: SideOptions): string[] {
  const head = `#### Under the ${LOAD[load]} load`;
  if (typeof p === "string") return [head, "", `No profile: ${p}.`, ""];
  const pct = (share: number) => `${(share * 100).toFixed(1)}%`;
  // A main thread near one core is saturated: it, not the machine, bounds the gateway's rate.
  const threads = p.threads.filter((t) => t.cores >= 0.005).map((t) =>
    `${t.name} ${t.cores.toFixed(2)}${t.name === "main" && t.cores >= 0.95 ? " (saturated)" : ""}`
  );
  const shares = (rows: SelfTime[], name: (t: SelfTime) => string) =>
    rows.map((t, i) => [String(i + 1), pct(t.share), num(t.samples), name(t)]);
  return [
    head,
    "",
    `A fresh gateway (KV file) run with \`--cpu-prof\`, under the ${
      LOAD[load]
    } load at c=${CONNECTIONS} (wrk, ` +
    `${o.warmup} s warm-up, then ${o.seconds} s: ${num(p.wrk.rps)} ${
      UNIT[load]
    } with the profiler on); the ` +
    `profile is read over that window less ${PROFILE_TRIM_MS} ms at each end. The gateway process used ` +
    `${(p.cpu.byName.gateway ?? NaN).toFixed(2)} cores, by thread: ${
      threads.join(", ")
    }. The profile samples ` +
    `the main thread only: ${pct(p.busy / Math.max(1, p.total))} of its ${num(p.total)} samples were busy ` +
    "(JavaScript, a native op called from it, GC, or native work V8 cannot attribute: `(program)`); the rest " +
    "are V8's `(idle)`, the thread in Deno's event loop outside JavaScript. Shares below are of the busy samples.",
    "",
    grid(
      ["#", "Self time", "Samples", "Origin"],
      shares(p.origins, (t) => t.name),
      [true, true, true, false],
    ),
    "",
    grid(
      ["#", "Self time", "Samples", "Function and location (top 15)"],
      shares(p.top, (t) => `\`${t.name}\``),
      [true, true, true, false],
    ),
    "",
    "The gateway's own functions by total time (their self time and all they call, runtime included; a " +
    "sample counts once per function on its stack, so the shares overlap along a call chain):",
    "",
    grid(
      ["#", "Total time", "Samples", "Function and location (top 15)"],
      shares(p.inclusive, (t) => `\`${t.name}\``),
      [true, true, true, false],
    ),
    "",
  ];
}

const holdOk = (h: ProxyHold) => h.opened === h.attempted && h.errors === 0;
const holdMet = (h: ProxyHold) =>
  holdOk(h) && projectedMiB(h) < TARGET.rssMiB && perStreamKiB(h) <= TARGET.streamKiB;

/** A gateway's idle-stream hold for the targets table: what it held, or what went wrong. */
function holdSummary(h: ProxyHold): string {
  if (!holdOk(h)) return `${num(h.opened)} of ${num(h.attempted)} opened, ${h.errors} errors`;
  const settled = settledPerStreamKiB(h);
  return `${num(h.openKiB / 1024, 1)} MiB with ${num(h.opened)} open (${
    num(perStreamKiB(h), 1)
  } KiB per stream)` +
    (h.attempted < h.requested ? `; ${num(projectedMiB(h), 1)} MiB projected at ${num(h.requested)}` : "") +
    (settled === undefined
      ? ""
      : `; ${num(settled, 1)} KiB per stream after ${num(h.settleMs! / 1000)} s idle`);
}

/** Every c=32 round's rate per side, and the gateway's share of the bare proxy's in each. */
function roundsLine(runs: Record<Side, SideRuns>, specHead: SpecHeadRuns): string {
  const kinds = [["json32", "JSON req/s"], ["stream32", "streams/s"]] as const;
  const parts = kinds.map(([kind, unit]) => {
    const shares = runs.gateway.rounds[kind].map((g, i) => x(g.wrk.rps, runs.bare.rounds[kind][i]!.wrk.rps));
    const sides = SIDES.map((s) =>
      `${NAME[s]} ${runs[s].rounds[kind].map((r) => num(r.wrk.rps)).join(" / ")}`
    ).concat(
      kind === "json32"
        ? [`${SPEC_HEAD_NAME} ${specHead.rounds.map((r) => num(r.wrk.rps)).join(" / ")}`]
        : [],
    );
    return `${unit}: ${sides.join("; ")} (the gateway's share of the bare proxy's, round by round: ${
      shares.join(", ")
    })`;
  });
  const proxies = SIDES.filter((s) => s !== "direct");
  const c1 = proxies.map((s) =>
    `${NAME[s]} ${
      runs[s].json1Rounds.map((w, i) => signed(w.p99Ms - runs.direct.json1Rounds[i]!.p99Ms)).join(" / ")
    }`
  );
  const ttfb = (c: (r: SideRuns) => OneConnection) =>
    proxies.map((s) =>
      `${NAME[s]} ${
        c(runs[s]).ttfb1Rounds.map((r, i) =>
          signed(percentile(r.ttfb, 50) - percentile(c(runs.direct).ttfb1Rounds[i]!.ttfb, 50))
        ).join(" / ")
      }`
    ).join("; ");
  const shared = runs.gateway.shared ? `; with every process on any core: ${ttfb((r) => r.shared!)}` : "";
  return `Rounds at c=32, in the order run — ${parts.join(". ")}. c=1 JSON added p99, round by round: ${
    c1.join("; ")
  }. c=1 stream TTFB added p50, round by round: ${ttfb((r) => r)}${shared}.`;
}

/** How the one-connection rounds placed the processes (bench/affinity.ts). */
function placement(cores: CoreSplit | string): string {
  if (typeof cores === "string") {
    return `Every process on any core at c=1 (the cores could not be split: ${cores}).`;
  }
  return `Each c=1 round runs twice: first with the proxy under test (every thread) on CPU ${cores.proxy} and ` +
    `the load generator and the mock on CPU ${cores.load} (\`taskset\`: a deployment's clients and upstream ` +
    "are on other machines; the c=1 columns and target are these rounds), then with every process on any core " +
    '(a row of its own below; docs/performance.md "One connection: the proxy on a core of its own").';
}
