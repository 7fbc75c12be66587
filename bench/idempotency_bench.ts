/**
 * What an Idempotency-Key costs (docs/idempotency.md), part of `deno task bench` and runnable alone (then it
 * replaces only its own section of bench/RESULTS.md):
 *
 *   deno run -A --unstable-kv --unstable-no-legacy-abort bench/idempotency_bench.ts
 *
 * - CPU: the gateway process's CPU per response under wrk (32 connections, on the simulator, a KV file as the
 *   store) for JSON and stream requests without a key, with a new key each (claimed, answer kept and stored)
 *   and with one key for all (every request after the first a replay). Each round a fresh gateway per
 *   variant, the variants in turn; the medians of the rounds.
 * - Memory: the heap per open stream with and without a key at N open streams (bench/idempotency_heap.ts, a
 *   fresh process per mode), and how much of it is the answer kept for replay.
 */
import { envNum } from "./env.ts";
import type { HeapResult } from "./idempotency_heap.ts";
import { createKey, type Proc, ROOT, startGatewayProc, startSim } from "./procs.ts";
import { processCpuMs } from "./proxy_cost.ts";
import { grid, num } from "./report.ts";
import { chat, PATH } from "./scenarios.ts";
import { IDEMPOTENCY_HEADING, sectionOf, withSection } from "./sections.ts";
import { ensureWrk, runWrk, wrkScript } from "./wrk.ts";

type Variant = "unkeyed" | "keyed" | "replay";
type Load = "json" | "stream";
const VARIANTS: Variant[] = ["unkeyed", "keyed", "replay"];
const BODY: Record<Load, string> = {
  json: chat("Say hello in one short sentence.", false),
  stream: chat("Say hello in one short sentence.", true),
};
const WARMUP_S = 2;

/** wrk's script; `keyed`: every request a key of its own (a random prefix per wrk thread, then a count). */
function script(headers: Record<string, string>, body: string, keyed: boolean): string {
  const base = wrkScript(headers, body);
  if (!keyed) return base;
  return base + [
    'local run = io.open("/proc/sys/kernel/random/uuid"):read("*l")',
    "local n = 0",
    "function request()",
    "  n = n + 1",
    '  wrk.headers["idempotency-key"] = run .. "-" .. n',
    "  return wrk.format()",
    "end",
    "",
  ].join("\n");
}

interface Cost {
  perSecond: number;
  cpuUs: number;
}

async function cost(gw: Proc, file: string, seconds: number): Promise<Cost> {
  await runWrk({ script: file, url: gw.url + PATH, connections: 32, threads: 2, seconds: WARMUP_S });
  const before = await processCpuMs(gw.pid);
  const r = await runWrk({ script: file, url: gw.url + PATH, connections: 32, threads: 2, seconds });
  if (r.errors) throw new Error(`${file}: ${r.errors} errors of ${r.requests} responses`);
  return {
    perSecond: r.requests / seconds,
    cpuUs: (await processCpuMs(gw.pid) - before) / r.requests * 1000,
  };
}

async function heap(mode: "keyed" | "unkeyed", n: number): Promise<HeapResult> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--unstable-kv",
      "--unstable-no-legacy-abort",
      "--v8-flags=--expose-gc",
      "bench/idempotency_heap.ts",
      mode,
      String(n),
    ],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout).trim();
  if (!out.success) throw new Error(`idempotency_heap ${mode}: ${new TextDecoder().decode(out.stderr)}`);
  return JSON.parse(text.split("\n").at(-1)!);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function git(...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", { args, cwd: ROOT, stdout: "piped", stderr: "null" }).output();
  return new TextDecoder().decode(out.stdout).trim();
}

export async function benchIdempotency(o: {
  log: (s: string) => void;
  seconds: number;
  command: string;
}): Promise<{ section: string } | { skipped: string }> {
  const missing = await ensureWrk(o.log);
  if (missing) return { skipped: missing };
  const rounds = envNum("BENCH_IDEM_ROUNDS", 3);
  const streams = envNum("BENCH_IDEM_STREAMS", 100);
  const dir = await Deno.makeTempDir({ prefix: "gw-bench-idem-" });
  const sim = await startSim();
  const costs = new Map<string, Cost[]>();
  try {
    for (let round = 0; round < rounds; round++) {
      for (const variant of VARIANTS) {
        const gw = await startGatewayProc(sim.url, {
          env: { DATABASE_URL: "", DATA_DIR: `${dir}/kv-${variant}-${round}` },
        });
        try {
          const key = await createKey(gw.url);
          for (const load of ["json", "stream"] as const) {
            if (variant === "replay" && load === "stream") continue;
            const headers: Record<string, string> = {
              "content-type": "application/json",
              authorization: `Bearer ${key}`,
              ...(variant === "replay" ? { "idempotency-key": `replay-${crypto.randomUUID()}` } : {}),
            };
            const file = `${dir}/${variant}-${load}.lua`;
            await Deno.writeTextFile(file, script(headers, BODY[load], variant === "keyed"));
            const c = await cost(gw, file, o.seconds);
            o.log(`  ${round} ${variant} ${load}: ${num(c.perSecond)}/s, ${c.cpuUs.toFixed(1)} µs CPU each`);
            costs.set(`${variant} ${load}`, [...costs.get(`${variant} ${load}`) ?? [], c]);
          }
        } finally {
          await gw.stop();
        }
      }
    }
  } finally {
    await sim.stop();
    await Deno.remove(dir, { recursive: true });
  }
  const heaps = { unkeyed: await heap("unkeyed", streams), keyed: await heap("keyed", streams) };
  o.log(`  heap: ${JSON.stringify(heaps)}`);
  const cpu = (v: Variant, l: Load) => median(costs.get(`${v} ${l}`)!.map((c) => c.cpuUs));
  const rate = (v: Variant, l: Load) => median(costs.get(`${v} ${l}`)!.map((c) => c.perSecond));
  const us = (x: number) => `${x.toFixed(1)} µs`;
  const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
  const perStream = (h: HeapResult) => (h.openHeap - h.idleHeap) / h.streams;
  const added = perStream(heaps.keyed) - perStream(heaps.unkeyed);
  const kept = heaps.keyed.keptBytes / heaps.keyed.streams;
  const commit = await git("rev-parse", "--short", "HEAD");
  const load = (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ");
  return {
    section: [
      `## ${IDEMPOTENCY_HEADING}`,
      "",
      `Command: \`${o.command}\` at commit ${commit}; ${new Date().toISOString()}; ` +
      `${navigator.hardwareConcurrency} CPUs, load average ${load} at the end.`,
      "",
      `Gateway CPU per response (its process, /proc), wrk at 32 connections on the simulator (12-word answer), a ` +
      `KV file as the store; ${WARMUP_S} s warm-up + ${o.seconds} s per run, median of ${rounds} rounds, each ` +
      "round a fresh gateway per variant, the variants in turn:",
      "",
      grid(
        ["Request", "Without a key", "A new key each", "Added by the key", "One key (replays)"],
        (["json", "stream"] as const).map((l) => [
          l === "json" ? "JSON" : "Stream",
          `${us(cpu("unkeyed", l))} (${num(rate("unkeyed", l))}/s)`,
          `${us(cpu("keyed", l))} (${num(rate("keyed", l))}/s)`,
          us(cpu("keyed", l) - cpu("unkeyed", l)),
          l === "json" ? `${us(cpu("replay", l))} (${num(rate("replay", l))}/s)` : "—",
        ]),
        [false, true, true, true, true],
      ),
      "",
      `Heap per open stream at ${streams} open streams (frames 250 ms apart, read as they come; measured ` +
      "2 s after all were open): heapUsed after a full collection, client, gateway and simulator in one " +
      "process (bench/idempotency_heap.ts), with all streams open minus before, per stream:",
      "",
      grid(
        ["Without a key", "With a key each", "Added per keyed stream", "Of which the answer kept so far"],
        [[kib(perStream(heaps.unkeyed)), kib(perStream(heaps.keyed)), kib(added), kib(kept)]],
        [true, true, true, true],
      ),
      "",
      "- With a key each request also claims the key and stores its answer (KV writes), hashes its canonical " +
      "body and is read out by its run (src/idempotency/keyed_run.ts); a replay is store reads and no upstream " +
      "call. Without the header the gateway reads it once (`headers.get`) and goes on as before.",
      "- A keyed stream keeps its answer so far (up to IDEMPOTENCY_MAX_BUFFER_BYTES, every stream of the " +
      "process up to IDEMPOTENCY_MAX_TOTAL_BYTES) plus its run: the rest of the added heap. The store's own " +
      "memory (Deno KV in memory) is not V8 heap and is not counted.",
      "",
    ].join("\n"),
  };
}

/** The section of `r`; the previous one when this run was skipped and a record exists. */
export function idempotencySection(r: { section: string } | { skipped: string }, previous: string): string {
  return "section" in r
    ? r.section
    : sectionOf(previous, IDEMPOTENCY_HEADING) || `## ${IDEMPOTENCY_HEADING}\n\n${r.skipped}\n`;
}

if (import.meta.main) {
  const log = (s: string) => console.error(s);
  const seconds = envNum("BENCH_SECONDS", 4);
  const r = await benchIdempotency({
    log,
    seconds,
    command: "deno run -A --unstable-kv --unstable-no-legacy-abort bench/idempotency_bench.ts",
  });
  const file = `${ROOT}bench/RESULTS.md`;
  const previous = await Deno.readTextFile(file).catch(() => "");
  const section = idempotencySection(r, previous);
  console.log(section);
  await Deno.writeTextFile(file, withSection(previous, IDEMPOTENCY_HEADING, section));
  await new Deno.Command(Deno.execPath(), { args: ["fmt", "--quiet", file], stdout: "null" }).output();
  log(`\nwritten ${file}`);
}
