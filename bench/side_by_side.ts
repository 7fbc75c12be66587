/**
 * Side by side under a C load generator, the reference for the gateway's throughput and latency: a section of
 * `deno task bench`, also runnable alone (then it replaces only its own section of bench/RESULTS.md):
 *
 *   deno run -A --unstable-kv --unstable-no-legacy-abort bench/side_by_side.ts
 *
 * Three targets in one run, each its own subprocess on loopback: direct to a minimal OpenAI Chat mock
 * (bench/chat_mock.ts), the bare Deno proxy in front of it (bench/bare_proxy.ts), and the gateway (`main.ts`
 * on a KV file, model k3, native Chat pass-through, billing on, ALPHA_UPSTREAM_URL = the mock). For each:
 * JSON req/s and streams/s at 32 connections (wrk, 2 threads), latency at one connection (wrk for JSON, a
 * Deno fetch client for the stream's first byte; each round with the proxy on a core of its own, then with every
 * process on any core: bench/affinity.ts), the CPU time of each server process per request and per
 * stream, and the RSS of both proxies during and after the loads; in each JSON round at c=32 also the bare proxy
 * answering with the head spec §2.5 asks for (request-id, x-request-id), the least a gateway on this spec sends; then a CPU profile of a gateway under
 * each load, and many idle streams held open through fresh processes (the bare proxy, the bare proxy with one
 * JavaScript stream hop, that behind the gateway's per-connection listener, the gateway as it ships and with
 * HTTP_CONNECTION_DEADLINES=off), with their RSS. wrk is installed with
 * apt-get when missing (bench/wrk.ts); without it the section is skipped.
 *
 * Env: BENCH_SIDE_SECONDS (each c=32 run, default 10; the c=1 runs take half), BENCH_SIDE_ROUNDS (rounds of
 * each c=32 load, the three sides in turn; each row shows the median round; default 3), BENCH_SIDE_WARMUP (wrk
 * warm-up before each c=32 run, default 2), BENCH_SIDE_STREAMS (idle streams, default 10000),
 * BENCH_SIDE_SETTLE_S (how long they are held before their RSS is read again, default 40; 0: not read again),
 * BENCH_SIDE_REST_S (after the last c=32 stream round, how long the proxies rest before their RSS is read
 * again, default 60).
 */
import { type CoreSplit, coreSplit, setCores } from "./affinity.ts";
import { threadCores, threadJiffies, withCpu } from "./cpu.ts";
import { envNonNegative, envNum } from "./env.ts";
import { holdBody, holdThrough, type ProxyHold } from "./idle_streams.ts";
import { type LoadResult, percentile, pooledLoads, runLoad } from "./load.ts";
import {
  ADMIN_TOKEN,
  createKey,
  type Proc,
  ROOT,
  startBareProxy,
  startChatMock,
  startGatewayProc,
  stopOnSignal,
} from "./procs.ts";
import { PROFILE_ROOT, readProfiles, topInclusive, topSelf } from "./profile.ts";
import { ms, num } from "./report.ts";
import { chat, PATH } from "./scenarios.ts";
import { sectionOf, SIDE_HEADING, withSection } from "./sections.ts";
import {
  CONNECTIONS,
  cpuMsPer,
  JS_HOP_DEADLINES_HOLD,
  JS_HOP_HOLD,
  type Loaded,
  medianLatencies,
  medianRound,
  NAME,
  PLAIN_HOLD,
  PROFILE_TRIM_MS,
  type Profiled,
  render,
  SERVER,
  type Side,
  type SideOptions,
  type SideRuns,
  SIDES,
  SPEC_HEAD_NAME,
  type SpecHeadRuns,
} from "./side_by_side_report.ts";
import { ensureWrk, runWrk, type WrkResult, wrkScript, wrkVersion } from "./wrk.ts";
import { rssNow, whilePeakRss } from "./rss_sampler.ts";

const JSON_BODY = chat("Say hello in one short sentence.", false);
const STREAM_BODY = chat("Tell me a story.", true);
const HOLD_BODY = holdBody();

/** The section's Markdown, or why it was skipped. */
export type SideResult = { section: string } | { skipped: string };

interface Endpoint {
  url: string;
  headers: Record<string, string>;
}

export async function benchSideBySide(o: SideOptions): Promise<SideResult> {
  const why = await ensureWrk(o.log);
  if (why) return { skipped: why };
  const commit = await measuredCommit();
  const wrk = await wrkVersion();
  o.log(`side by side under ${wrk} (${commit})`);
  const dir = await Deno.makeTempDir({ prefix: "gw-bench-side-" });
  const started: Proc[] = [];
  const start = async (p: Promise<Proc>) => {
    const proc = await p;
    started.push(proc);
    o.procs.push(proc);
    return proc;
  };
  /** A gateway on a KV file of its own (DATA_DIR `name`). */
  const gateway = (
    mockUrl: string,
    name: string,
    { env, ...opts }: { cpuProfDir?: string; fdLimit?: number; env?: Record<string, string> } = {},
  ) =>
    start(
      startGatewayProc(mockUrl, { env: { DATABASE_URL: "", DATA_DIR: `${dir}/${name}`, ...env }, ...opts }),
    );
  // Idle streams: two sockets each in a proxy, one in the mock.
  const fdLimit = 2 * o.streams + 1024;
  try {
    const mock = await start(startChatMock(fdLimit));
    const bare = await start(startBareProxy(mock.url));
    const specBare = await start(
      startBareProxy(mock.url, undefined, { env: { ANSWER_HEAD: "spec-chunked" } }),
    );
    const gw = await gateway(mock.url, "kv");
    const key = await createKey(gw.url);
    const json = { "content-type": "application/json" };
    const upstream = { ...json, authorization: "Bearer up-alpha" };
    const ep: Record<Side, Endpoint> = {
      direct: { url: mock.url, headers: upstream },
      bare: { url: bare.url, headers: upstream },
      gateway: { url: gw.url, headers: { ...json, authorization: `Bearer ${key}` } },
    };
    const rowsBefore = await usageRows(gw.url);
    const spec = { url: specBare.url, headers: upstream, pid: specBare.pid };
    const { runs, specHead, cores } = await measureSides(
      ep,
      { mock: mock.pid, bare: bare.pid, gateway: gw.pid },
      spec,
      dir,
      o,
    );
    const rows = (await usageRows(gw.url)) - rowsBefore;
    await Promise.all([gw.stop(), bare.stop(), specBare.stop()]);

    const profiled = {
      json: await profileRun("json", mock, dir, o, gateway),
      stream: await profileRun("stream", mock, dir, o, gateway),
    };
    // Idle streams through fresh processes, so heap grown under the load does not count.
    const holds: ProxyHold[] = [];
    // The bare proxy as it is (the body piped natively), then with one JavaScript stream hop read BYOB: the
    // least any proxy that reads the frames holds per stream on this runtime.
    // And that behind the gateway's own per-connection listener (src/http/serve.ts, the connection deadlines).
    const bareHolds = [
      [NAME.bare, {}],
      [JS_HOP_HOLD, { PUMP: "byob" }],
      [JS_HOP_DEADLINES_HOLD, { PUMP: "byob", SERVE: "deadlines" }],
    ] as const;
    for (const [name, env] of bareHolds) {
      const bareHold = await start(startBareProxy(mock.url, fdLimit, { env }));
      holds.push(await holdThrough(name, bareHold, { path: PATH, headers: upstream, body: HOLD_BODY }, o));
      await bareHold.stop();
    }
    // The gateway as it ships, then without the per-connection server the connection deadlines need.
    for (
      const [name, env] of [[NAME.gateway, {}], [PLAIN_HOLD, { HTTP_CONNECTION_DEADLINES: "off" }]] as const
    ) {
      const gwHold = await gateway(mock.url, `kv-hold-${holds.length}`, { fdLimit, env });
      const holdAuth = { ...json, authorization: `Bearer ${await createKey(gwHold.url)}` };
      holds.push(await holdThrough(name, gwHold, { path: PATH, headers: holdAuth, body: HOLD_BODY }, o));
      await gwHold.stop();
    }
    return { section: render({ o, commit, wrk, runs, specHead, rows, profiled, holds, cores }) };
  } finally {
    await Promise.all(started.map((p) => p.stop()));
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * JSON and streams at c=32 (wrk, with each process's CPU), JSON at c=1 (wrk), stream TTFB at c=1 (fetch). Each
 * JSON round at c=32 also runs `spec`, the bare proxy answering with the head spec §2.5 asks for (its CPU under
 * the name `bare`).
 */
async function measureSides(
  ep: Record<Side, Endpoint>,
  pids: Record<"mock" | "bare" | "gateway", number>,
  spec: Endpoint & { pid: number },
  dir: string,
  o: SideOptions,
): Promise<{ runs: Record<Side, SideRuns>; specHead: SpecHeadRuns; cores: CoreSplit | string }> {
  const script = async (side: Side, kind: string, body: string) => {
    const path = `${dir}/${side}-${kind}.lua`;
    await Deno.writeTextFile(path, wrkScript(ep[side].headers, body));
    return path;
  };
  const runs = {} as Record<Side, SideRuns>;
  const specRounds: Loaded[] = [];
  for (const side of SIDES) {
    runs[side] = { frames: await framesOf(ep[side]) } as SideRuns;
    o.log(`  ${NAME[side]}: ${runs[side].frames} SSE frames per stream reach the client`);
  }
  for (const side of SIDES) runs[side].rounds = { json32: [], stream32: [] };
  // RSS of the proxies: idle before any load, at the start of the stream rounds, and after a rest past them.
  const proxies = [pids.bare, pids.gateway];
  const idle = await rssNow(proxies);
  let streamStart = idle;
  for (const [kind, body] of [["json32", JSON_BODY], ["stream32", STREAM_BODY]] as const) {
    if (kind === "stream32") streamStart = await rssNow(proxies);
    for (let round = 0; round < o.rounds; round++) {
      for (const side of SIDES) {
        const s = await script(side, kind, body);
        const run = { script: s, url: ep[side].url + PATH, connections: CONNECTIONS, threads: 2 };
        await runWrk({ ...run, seconds: o.warmup });
        const t0 = performance.now();
        const server = pids[SERVER[side]];
        const [[w, cpu], peak] = await whilePeakRss(
          [server],
          () => withCpu(pids, () => runWrk({ ...run, seconds: o.seconds })),
        );
        const loaded = { wrk: w, cpu, wallMs: performance.now() - t0, peakRssKiB: peak.get(server)! };
        runs[side].rounds[kind].push(loaded);
        o.log(
          `  ${kind} round ${round + 1} ${NAME[side]}: ${num(w.rps)}/s, p50 ${ms(w.p50Ms)}, p99 ${
            ms(w.p99Ms)
          }, errors ${w.errors}; ` +
            `${SERVER[side]} ${ms(cpuMsPer(loaded, SERVER[side]))} CPU each, RSS peak ${
              num(loaded.peakRssKiB / 1024, 1)
            } MiB`,
        );
      }
      if (kind === "json32") specRounds.push(await specRound(spec, body, dir, o, pids.mock, round));
    }
    for (const side of SIDES) runs[side][kind] = medianRound(runs[side].rounds[kind]);
  }
  o.log(`  resting ${o.restMs / 1000} s, then the proxies' RSS again`);
  await new Promise((r) => setTimeout(r, o.restMs));
  const rested = await rssNow(proxies);
  for (const side of ["bare", "gateway"] as const) {
    const pid = pids[side];
    runs[side].memory = {
      idleKiB: idle.get(pid)!,
      streamStartKiB: streamStart.get(pid)!,
      restedKiB: rested.get(pid)!,
    };
  }
  // One connection, in as many rounds: each round with the proxies on a core of their own (the load and the
  // mock on the others: bench/affinity.ts), then with every process on any core.
  const cores = await coreSplit();
  if (typeof cores === "string") o.log(`  c=1 with the cores shared only: ${cores}`);
  const c1 = { own: oneConnectionRuns(), shared: oneConnectionRuns() };
  for (let round = 0; round < o.rounds; round++) {
    if (typeof cores !== "string") {
      try {
        await setCores(cores.load, [Deno.pid, pids.mock]);
        await setCores(cores.proxy, proxies);
        await oneConnectionRound(ep, script, c1.own, `round ${round + 1}, own core`, o);
      } finally {
        await setCores(cores.all, [Deno.pid, pids.mock, ...proxies]);
      }
    }
    await oneConnectionRound(ep, script, c1.shared, `round ${round + 1}, shared`, o);
  }
  for (const side of SIDES) {
    const figures = (r: OneConnectionRuns) => ({
      json1Rounds: r.json1[side],
      json1: medianLatencies(r.json1[side]),
      ttfb1Rounds: r.ttfb1[side],
      ttfb1: pooledLoads(r.ttfb1[side]),
    });
    Object.assign(runs[side], figures(typeof cores === "string" ? c1.shared : c1.own));
    if (typeof cores !== "string") runs[side].shared = figures(c1.shared);
  }
  return { runs, specHead: { json32: medianRound(specRounds), rounds: specRounds }, cores };
}

interface OneConnectionRuns {
  json1: Record<Side, WrkResult[]>;
  ttfb1: Record<Side, LoadResult[]>;
}

const oneConnectionRuns = (): OneConnectionRuns => ({
  json1: { direct: [], bare: [], gateway: [] },
  ttfb1: { direct: [], bare: [], gateway: [] },
});

/** One c=1 round of each side: JSON (wrk), then the stream's first byte (a fetch loop), added to `into`. */
async function oneConnectionRound(
  ep: Record<Side, Endpoint>,
  script: (side: Side, kind: string, body: string) => Promise<string>,
  into: OneConnectionRuns,
  label: string,
  o: SideOptions,
): Promise<void> {
  const seconds = Math.max(1, Math.round(o.seconds / 2)); // wrk takes whole seconds
  for (const side of SIDES) {
    const j = await runWrk({
      script: await script(side, "json1", JSON_BODY),
      url: ep[side].url + PATH,
      connections: 1,
      threads: 1,
      seconds,
    });
    into.json1[side].push(j);
    o.log(`  json c=1 ${label} ${NAME[side]}: p50 ${ms(j.p50Ms)}, p99 ${ms(j.p99Ms)}`);
  }
  for (const side of SIDES) {
    const r = await runLoad({
      url: ep[side].url + PATH,
      headers: ep[side].headers,
      body: STREAM_BODY,
      concurrency: 1,
      warmupSeconds: 1,
      seconds,
    });
    into.ttfb1[side].push(r);
    o.log(
      `  stream TTFB c=1 ${label} ${NAME[side]}: p50 ${ms(percentile(r.ttfb, 50))}, p99 ${
        ms(percentile(r.ttfb, 99))
      }, errors ${r.errors}`,
    );
  }
}

/** One c=32 JSON round of the bare proxy with the answer head of spec §2.5. */
async function specRound(
  spec: Endpoint & { pid: number },
  body: string,
  dir: string,
  o: SideOptions,
  mock: number,
  round: number,
): Promise<Loaded> {
  const script = `${dir}/spec-json32.lua`;
  await Deno.writeTextFile(script, wrkScript(spec.headers, body));
  const run = { script, url: spec.url + PATH, connections: CONNECTIONS, threads: 2 };
  await runWrk({ ...run, seconds: o.warmup });
  const t0 = performance.now();
  const [[w, cpu], peak] = await whilePeakRss(
    [spec.pid],
    () => withCpu({ mock, bare: spec.pid }, () => runWrk({ ...run, seconds: o.seconds })),
  );
  const loaded = { wrk: w, cpu, wallMs: performance.now() - t0, peakRssKiB: peak.get(spec.pid)! };
  o.log(
    `  json32 round ${round + 1} ${SPEC_HEAD_NAME}: ${num(w.rps)}/s, errors ${w.errors}; ${
      ms(cpuMsPer(loaded, "bare"))
    } CPU each`,
  );
  return loaded;
}

/** The commit the gateway's code comes from, and whether the work tree differs from it there. */
async function measuredCommit(): Promise<string> {
  const git = async (...args: string[]) => {
    const out = await new Deno.Command("git", {
      args: ["-C", ROOT, ...args],
      stdout: "piped",
      stderr: "null",
    })
      .output().catch(() => undefined);
    return out?.success ? new TextDecoder().decode(out.stdout).trimEnd() : undefined;
  };
  const head = await git("rev-parse", "HEAD");
  if (!head) return "commit unknown (not a git checkout)";
  const dirty = await git("status", "--porcelain", "--", "src", "main.ts", "deno.json");
  return dirty
    ? `commit ${head} with uncommitted changes to ${dirty.split("\n").map((l) => l.slice(3)).join(", ")}`
    : `commit ${head} (src/, main.ts and deno.json as committed)`;
}

/** One stream through `ep`: how many SSE frames reach the client; throws unless it ends with [DONE]. */
async function framesOf(ep: Endpoint): Promise<number> {
  const res = await fetch(ep.url + PATH, { method: "POST", headers: ep.headers, body: STREAM_BODY });
  const text = await res.text();
  if (res.status !== 200 || !text.includes("data: [DONE]")) {
    throw new Error(`stream check failed at ${ep.url}: ${res.status} ${text.slice(0, 300)}`);
  }
  return text.split("\n").filter((l) => l.startsWith("data:")).length;
}

/** Usage rows the gateway has committed (GET /metrics, the group commit's row count). */
async function usageRows(url: string): Promise<number> {
  const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  const text = await res.text();
  return Number(/^gateway_group_commit_batch_rows_sum (\S+)$/m.exec(text)?.[1] ?? NaN);
}

/** A gateway with --cpu-prof under the c=32 JSON or stream load; the top self and total time over the measured
 *  window. */
async function profileRun(
  load: "json" | "stream",
  mock: Proc,
  dir: string,
  o: SideOptions,
  gateway: (mockUrl: string, name: string, opts: { cpuProfDir: string }) => Promise<Proc>,
): Promise<Profiled | string> {
  const profDir = `${dir}/prof-${load}`;
  const spawnedAt = performance.now();
  const gw = await gateway(mock.url, `kv-prof-${load}`, { cpuProfDir: profDir });
  const key = await createKey(gw.url);
  const script = `${dir}/prof-${load}.lua`;
  await Deno.writeTextFile(
    script,
    wrkScript(
      { "content-type": "application/json", authorization: `Bearer ${key}` },
      load === "json" ? JSON_BODY : STREAM_BODY,
    ),
  );
  const run = { script, url: gw.url + PATH, connections: CONNECTIONS, threads: 2 };
  o.log(`  profiled gateway pid ${gw.pid}: ${load} c=${CONNECTIONS}`);
  await runWrk({ ...run, seconds: o.warmup });
  const threadsBefore = await threadJiffies(gw.pid);
  const from = performance.now() - spawnedAt;
  const [w, cpu] = await withCpu(
    { gateway: gw.pid, mock: mock.pid },
    () => runWrk({ ...run, seconds: o.seconds }),
  );
  const to = performance.now() - spawnedAt;
  const threads = threadCores(threadsBefore, await threadJiffies(gw.pid), (to - from) / 1000);
  await gw.stop(); // the profile is written as the process exits
  const [p] = await readProfiles(profDir).catch(() => []);
  if (!p) return `no .cpuprofile was written to ${profDir}`;
  // Times are from the spawn; the profile starts some 30 ms later: trim each end of the window.
  const window = { fromMs: from + PROFILE_TRIM_MS, toMs: to - PROFILE_TRIM_MS };
  const t = topSelf(p.profile, PROFILE_ROOT, 15, window);
  const inclusive = topInclusive(p.profile, PROFILE_ROOT, 15, window);
  o.log(`  profile ${p.name}: ${t.busy} busy of ${t.total} samples in the window`);
  return { load, file: p.name, ...t, inclusive, threads, windowMs: to - from, wrk: w, cpu };
}

/** `doc` with the side-by-side section: this run's, else the one kept from `previous`, else why it was skipped. */
export function withSideSections(doc: string, r: SideResult, previous: string): string {
  const section = "section" in r
    ? r.section
    : sectionOf(previous, SIDE_HEADING) || `## ${SIDE_HEADING}\n\n${r.skipped}\n`;
  return withSection(doc, SIDE_HEADING, section);
}

/** The options of a run from the environment (bench/side_by_side.ts header). */
export function sideOptionsFromEnv(
  log: (s: string) => void,
  procs: Proc[],
  base: string,
): SideOptions {
  const set = [
    "BENCH_SIDE_SECONDS",
    "BENCH_SIDE_ROUNDS",
    "BENCH_SIDE_WARMUP",
    "BENCH_SIDE_STREAMS",
    "BENCH_SIDE_SETTLE_S",
    "BENCH_SIDE_REST_S",
  ]
    .filter((n) => Deno.env.get(n))
    .map((n) => `${n}=${Deno.env.get(n)}`);
  return {
    seconds: envNum("BENCH_SIDE_SECONDS", 10),
    rounds: envNum("BENCH_SIDE_ROUNDS", 3),
    warmup: envNum("BENCH_SIDE_WARMUP", 2),
    streams: envNum("BENCH_SIDE_STREAMS", 10_000),
    settleMs: envNonNegative("BENCH_SIDE_SETTLE_S", 40) * 1000,
    restMs: envNonNegative("BENCH_SIDE_REST_S", 60) * 1000,
    log,
    procs,
    command: set.length ? `${set.join(" ")} ${base}` : base,
  };
}

if (import.meta.main) {
  const procs: Proc[] = [];
  const unhook = stopOnSignal(procs);
  const log = (s: string) => console.error(s);
  try {
    const r = await benchSideBySide(
      sideOptionsFromEnv(
        log,
        procs,
        "deno run -A --unstable-kv --unstable-no-legacy-abort bench/side_by_side.ts",
      ),
    );
    if ("skipped" in r) log(r.skipped);
    else console.log(r.section);
    const file = `${ROOT}bench/RESULTS.md`;
    const doc = await Deno.readTextFile(file).catch(() => "");
    await Deno.writeTextFile(file, withSideSections(doc, r, doc));
    await new Deno.Command(Deno.execPath(), { args: ["fmt", "--quiet", file], stdout: "null" }).output();
    log(`\nwritten ${file}`);
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
    unhook();
  }
}
