/**
 * What a proxy keeps per idle open stream (issue 18's memory target), from two V8 heap snapshots: one with no
 * stream open, one with HEAP_STREAMS (2,000) idle streams open (bench/idle_streams.ts: the Chat mock sends the
 * first content chunk, then nothing). Prints, per stream: RSS, V8 heap used, external memory (Deno.memoryUsage
 * in the process), the heap's growth by constructor (count, self size), plain objects by their properties, and
 * retained sizes; given more targets, also what the first keeps beyond each of the others.
 *
 *   deno run -A --unstable-kv bench/heap_per_stream.ts [gateway | bare | js | byob]…   (default gateway)
 *
 * e.g. `gateway byob`: the gateway beside the bare proxy reading its upstream through a JavaScript stream as the
 * gateway does (PUMP=byob, bench/bare_proxy.ts): the difference is the gateway's own. Each process runs under
 * bench/heap_probe.ts, which writes a snapshot (node:v8, after a full garbage collection) when signalled; RSS
 * is read before it (at 2,000 streams RSS per stream is rough: bench/idle_hold.ts measures it at 10,000).
 * HEAP_DIR keeps the .heapsnapshot files; BENCH_IDLE_PROMPT_BYTES pads each request's prompt.
 */
import { envNum } from "./env.ts";
import { type GroupStat, groupStats, objectShapes, parseHeap, retainedByGroup } from "./heap_snapshot.ts";
import { holdBody, holdIdleStreams } from "./idle_streams.ts";
import {
  createKey,
  memoryOf,
  type Proc,
  startBareProxy,
  startChatMock,
  startGatewayProc,
  stopOnSignal,
} from "./procs.ts";
import { num } from "./report.ts";
import { PATH } from "./scenarios.ts";

const TARGETS = ["gateway", "bare", "js", "byob"];
const TOP = 30;
const TOP_SHAPES = 15;

/** One snapshot, summarised at once (a parsed snapshot of 2,000 streams takes hundreds of MB). */
interface Sample {
  rssKiB: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  groups: Map<string, GroupStat>;
  shapes: Map<string, number>;
  retained?: Map<string, { retained: number; chain: string[] }>;
}

interface Measured {
  name: string;
  /** Streams open in the second sample. */
  n: number;
  before: Sample;
  after: Sample;
}

/** RSS now, then the probe's heap snapshot and memory figures (bench/heap_probe.ts). */
async function sample(pid: number, dir: string, seq: number, retained: boolean): Promise<Sample> {
  const rssKiB = (await memoryOf(pid)).rssKiB;
  Deno.kill(pid, "SIGUSR2");
  for (const until = performance.now() + 120_000;;) {
    try {
      const mem = JSON.parse(await Deno.readTextFile(`${dir}/${seq}.json`));
      const heap = parseHeap(await Deno.readTextFile(`${dir}/${seq}.heapsnapshot`));
      return {
        ...mem,
        rssKiB,
        groups: groupStats(heap),
        shapes: objectShapes(heap),
        ...(retained ? { retained: retainedByGroup(heap) } : {}),
      };
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound) || performance.now() > until) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** Growth per stream between the two samples of `m`, by key. */
function growth<T>(m: Measured, of: (s: Sample) => Map<string, T>, value: (t: T) => number[]) {
  const out = new Map<string, number[]>();
  const before = of(m.before);
  for (const [k, t] of of(m.after)) {
    const b = before.get(k);
    out.set(k, value(t).map((v, i) => (v - (b === undefined ? 0 : value(b)[i]!)) / m.n));
  }
  for (const [k, t] of before) if (!of(m.after).has(k)) out.set(k, value(t).map((v) => -v / m.n));
  return out;
}
const byGroup = (m: Measured) => growth(m, (s) => s.groups, (g) => [g.count, g.self]);
const byShape = (m: Measured) => growth(m, (s) => s.shapes, (c) => [c]);

/** Per stream: RSS (KB) and the V8 figures (bytes). */
function memory(m: Measured) {
  const d = (f: (s: Sample) => number) => (f(m.after) - f(m.before)) / m.n;
  return {
    rssKB: d((s) => s.rssKiB),
    heapUsed: d((s) => s.heapUsed),
    heapTotal: d((s) => s.heapTotal),
    external: d((s) => s.external),
  };
}

function memoryTable(rows: [string, ReturnType<typeof memory>][]): void {
  const kb = (bytes: number) => `${num(bytes / 1024, 2)} KB`;
  console.log("| | RSS | V8 heap used | V8 heap total | external |");
  console.log("| --- | ---: | ---: | ---: | ---: |");
  for (const [name, r] of rows) {
    console.log(
      `| ${name} | ${num(r.rssKB, 1)} KB | ${kb(r.heapUsed)} | ${kb(r.heapTotal)} | ${kb(r.external)} |`,
    );
  }
}

function groupTable(rows: [string, number[]][], title: string): void {
  const sorted = rows.sort((x, y) => y[1][1]! - x[1][1]!);
  const total = sorted.reduce((t, r) => t + r[1][1]!, 0);
  console.log(`\n${title} (self size; all groups: ${num(total, 0)} bytes per stream):\n`);
  console.log("| Constructor / kind | Objects per stream | Self bytes per stream |");
  console.log("| --- | ---: | ---: |");
  for (const [g, [count, self]] of sorted.slice(0, TOP)) {
    console.log(`| \`${g}\` | ${num(count!, 2)} | ${num(self!, 0)} |`);
  }
}

function shapeTable(rows: [string, number[]][], title: string): void {
  console.log(`\n${title}:\n`);
  console.log("| Properties | Objects per stream |");
  console.log("| --- | ---: |");
  for (const [k, [c]] of rows.sort((x, y) => y[1][0]! - x[1][0]!).slice(0, TOP_SHAPES)) {
    console.log(`| ${k} | ${num(c!, 2)} |`);
  }
}

function report(m: Measured): void {
  console.log(`\n## ${m.name}: ${num(m.n)} idle streams, per stream\n`);
  memoryTable([[m.name, memory(m)]]);
  const groups = byGroup(m);
  groupTable([...groups], "Heap growth by constructor");
  shapeTable([...byShape(m)], "Plain objects (`Object`) by their first properties");
  // Groups with about one object per stream or more; groups overlap (a pipeline retains its reader).
  const rows = [...m.after.retained!].filter(([g]) => (groups.get(g)?.[0] ?? 0) >= 0.9)
    .sort((x, y) => y[1].retained - x[1].retained).slice(0, TOP);
  console.log(`\nRetained size of the groups with ≥ 0.9 objects per stream (with streams open):\n`);
  console.log(
    "| Constructor / kind | Objects per stream | Retained bytes per stream | One instance's dominators |",
  );
  console.log("| --- | ---: | ---: | --- |");
  for (const [g, r] of rows) {
    console.log(
      `| \`${g}\` | ${num(groups.get(g)![0]!, 2)} | ${num(r.retained / m.n, 0)} | ${r.chain.join(" ← ")} |`,
    );
  }
}

/** What `a` keeps per stream beyond `b`. */
function compare(a: Measured, b: Measured): void {
  console.log(`\n## ${a.name} beyond ${b.name}, per stream\n`);
  const ma = memory(a), mb = memory(b);
  memoryTable([[a.name, ma], [b.name, mb], ["difference", {
    rssKB: ma.rssKB - mb.rssKB,
    heapUsed: ma.heapUsed - mb.heapUsed,
    heapTotal: ma.heapTotal - mb.heapTotal,
    external: ma.external - mb.external,
  }]]);
  const minus = (x: Map<string, number[]>, y: Map<string, number[]>) =>
    [...new Set([...x.keys(), ...y.keys()])].map((k): [string, number[]] => {
      const u = x.get(k) ?? [0, 0], v = y.get(k) ?? [0, 0];
      return [k, u.map((n, i) => n - (v[i] ?? 0))];
    });
  groupTable(minus(byGroup(a), byGroup(b)), `Heap growth by constructor, ${a.name} minus ${b.name}`);
  shapeTable(
    minus(byShape(a), byShape(b)),
    `Plain objects by their first properties, ${a.name} minus ${b.name}`,
  );
}

async function measure(target: string, n: number, dir: string, procs: Proc[]): Promise<Measured> {
  const fdLimit = 2 * n + 1024;
  const probe = await Deno.makeTempDir({ dir, prefix: `${target}-` });
  const started: Proc[] = [];
  const start = async (p: Promise<Proc>) => {
    const proc = await p;
    started.push(proc);
    procs.push(proc);
    return proc;
  };
  try {
    const mock = await start(startChatMock(fdLimit));
    const json = { "content-type": "application/json" };
    let proc: Proc, headers: Record<string, string>;
    if (target === "gateway") {
      const env = { DATABASE_URL: "", DATA_DIR: `${probe}/kv` };
      proc = await start(startGatewayProc(mock.url, { env, fdLimit, heapProbeDir: probe }));
      headers = { ...json, authorization: `Bearer ${await createKey(proc.url)}` };
    } else {
      const env: Record<string, string> = target === "bare" ? {} : { PUMP: target };
      proc = await start(startBareProxy(mock.url, fdLimit, { env, heapProbeDir: probe }));
      headers = { ...json, authorization: "Bearer up-alpha" };
    }
    const body = holdBody(Number(Deno.env.get("BENCH_IDLE_PROMPT_BYTES") ?? 0));
    const hold = { url: proc.url, path: PATH, headers, body, batch: 500, timeoutMs: 180_000 };
    // Warm-up: one-time allocations of the stream path (compiled code, lazily built tables) are not per stream.
    await holdIdleStreams({ ...hold, n: 200 }, () => Promise.resolve());
    await new Promise((r) => setTimeout(r, 2000));
    const before = await sample(proc.pid, probe, 1, false);
    const r = await holdIdleStreams({ ...hold, n }, () => sample(proc.pid, probe, 2, true));
    if (r.errors || !r.value) throw new Error(`${target}: ${r.errors} streams failed: ${r.firstError}`);
    return { name: target, n: r.opened, before, after: r.value };
  } finally {
    await Promise.all(started.map((p) => p.stop()));
  }
}

if (import.meta.main) {
  const targets = Deno.args.length ? Deno.args : ["gateway"];
  for (const t of targets) if (!TARGETS.includes(t)) throw new Error(`unknown target ${t}`);
  const n = envNum("HEAP_STREAMS", 2_000);
  const procs: Proc[] = [];
  const unhook = stopOnSignal(procs);
  const keep = Deno.env.get("HEAP_DIR");
  const dir = keep ?? await Deno.makeTempDir({ prefix: "gw-bench-heap-" });
  try {
    const measured: Measured[] = [];
    for (const t of targets) measured.push(await measure(t, n, dir, procs));
    for (const m of measured) report(m);
    for (const other of measured.slice(1)) compare(measured[0]!, other);
  } finally {
    unhook();
    if (!keep) await Deno.remove(dir, { recursive: true });
  }
}
