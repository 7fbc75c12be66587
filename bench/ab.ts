/**
 * Alternated A/B runs of gateway variants under wrk, the way bench/RESULTS.md compares a change with the commit
 * before it: on a 2-core machine one run's spread (±5%) is as large as most single changes, so variants run in
 * turn, each round a fresh process of each, and the medians are compared.
 *
 *   deno run -A --unstable-kv bench/ab.ts ROUNDS NAME[:K=V,...] ...
 *
 * A variant's K=V pairs are its environment, over the start task's variables (procs.ts withStartEnv:
 * `DENO_V8_FLAGS=,MALLOC_ARENA_MAX=` runs a gateway with the runtime's defaults; a value's `;` stands for a comma,
 * `DENO_V8_FLAGS=--a;--b`); `DIR=/path` runs the gateway
 * of another tree (a `git worktree` of the previous commit). AB_LOAD picks the load: `json32` (default) and
 * `stream32` report requests (streams) per second and the gateway's CPU per response at 32 connections; `json1` the p50 and p99 latency at one
 * connection minus the mock's own, measured just before (the side by side's "c=1 added p50 / p99"); `ttfb1` a
 * stream's time to its first body chunk at one connection the same way (a Deno fetch client, bench/load.ts, as
 * the side by side). A variant with `BARE=1` is the bare Deno proxy (bench/bare_proxy.ts) instead of a gateway.
 * With AB_PIN=1 every process under test runs on a core of its own, and the load and the mock on the others, as
 * in the side by side's one-connection rounds (bench/affinity.ts).
 * Before a one-connection load each process serves AB_WARMUP seconds (default 5) of the same request at 32
 * connections, as the side by side's processes have before theirs: a fresh gateway is still compiling its
 * request path for its first thousands of requests, and at one connection that, not the code's steady
 * state, is what a cold measurement shows (docs/performance.md "Stream TTFB at c=1").
 */
import { coreSplit, setCores } from "./affinity.ts";
import { envNum } from "./env.ts";
import { percentile, runLoad } from "./load.ts";
import { createKey, type Proc, startBareProxy, startChatMock, startGatewayProc } from "./procs.ts";
import { loadCost } from "./proxy_cost.ts";
import { chat, PATH } from "./scenarios.ts";
import { ensureWrk, runWrk, wrkScript } from "./wrk.ts";

type Load = "json32" | "stream32" | "json1" | "ttfb1";
const load = (Deno.env.get("AB_LOAD") ?? "json32") as Load;
const seconds = envNum("AB_SECONDS", 5);
const warmup = envNum("AB_WARMUP", 5);
const rounds = Number(Deno.args[0]);
if (!Number.isInteger(rounds) || rounds < 1 || !["json32", "stream32", "json1", "ttfb1"].includes(load)) {
  console.error("usage: AB_LOAD=json32|stream32|json1|ttfb1 bench/ab.ts ROUNDS NAME[:K=V,...] ...");
  Deno.exit(2);
}
const variants = Deno.args.slice(1).map((arg) => {
  const colon = arg.indexOf(":");
  const env: Record<string, string> = {};
  for (const pair of (colon < 0 ? "" : arg.slice(colon + 1)).split(",").filter(Boolean)) {
    const eq = pair.indexOf("=");
    env[pair.slice(0, eq)] = pair.slice(eq + 1).replaceAll(";", ",");
  }
  return { name: colon < 0 ? arg : arg.slice(0, colon), env };
});

const missing = await ensureWrk(console.error);
if (missing) throw new Error(missing);
const mock = await startChatMock();
const cores = Deno.env.get("AB_PIN") === "1" ? await coreSplit() : undefined;
if (typeof cores === "string") throw new Error(`AB_PIN=1: ${cores}`);
if (cores) await setCores(cores.load, [Deno.pid, mock.pid]);
const dir = await Deno.makeTempDir({ prefix: "gw-ab-" });
const body = chat("Say hello in one short sentence.", load === "stream32" || load === "ttfb1");
const one = { connections: 1, threads: 1 };

/** A stream's p50 time to its first body chunk at one connection (ttfb1), after a second of warm-up. */
async function ttfbP50(url: string, headers: Record<string, string>): Promise<number> {
  const r = await runLoad({ url, headers, body, concurrency: 1, warmupSeconds: 1, seconds });
  if (r.errors) throw new Error(`ttfb1: ${r.errors} errors, the first: ${r.firstError}`);
  return percentile(r.ttfb, 50);
}

/** The mock's own c=1 p50 and p99 (json1; ttfb1: its p50 twice): what the gateway's are compared with. */
async function directAtOne(): Promise<[number, number]> {
  if (load === "ttfb1") {
    const p50 = await ttfbP50(mock.url + PATH, { "content-type": "application/json" });
    return [p50, p50];
  }
  const script = `${dir}/direct.lua`;
  await Deno.writeTextFile(script, wrkScript({ "content-type": "application/json" }, body));
  await runWrk({ script, url: mock.url + PATH, ...one, seconds: 1 });
  const w = await runWrk({ script, url: mock.url + PATH, ...one, seconds });
  return [w.p50Ms, w.p99Ms];
}

const results = new Map<string, number[][]>();
try {
  for (let round = 0; round < rounds; round++) {
    const [direct, direct99] = load === "json1" || load === "ttfb1" ? await directAtOne() : [0, 0];
    for (const v of variants) {
      const start: typeof startGatewayProc = v.env.DIR
        ? (await import(`${v.env.DIR}/bench/procs.ts`)).startGatewayProc
        : startGatewayProc;
      const bare = v.env.BARE === "1";
      const gw: Proc = bare
        ? await startBareProxy(mock.url, undefined, { env: v.env })
        : await start(mock.url, {
          env: { DATABASE_URL: "", DATA_DIR: `${dir}/kv-${v.name}-${round}`, ...v.env },
        });
      if (cores) await setCores(cores.proxy, [gw.pid]);
      try {
        const script = `${dir}/${v.name}.lua`;
        const key = bare ? "up-alpha" : await createKey(gw.url);
        await Deno.writeTextFile(
          script,
          wrkScript({ "content-type": "application/json", authorization: `Bearer ${key}` }, body),
        );
        let figures: number[];
        if ((load === "json1" || load === "ttfb1") && warmup > 0) {
          await runWrk({ script, url: gw.url + PATH, connections: 32, threads: 2, seconds: warmup });
        }
        if (load === "ttfb1") {
          const p50 = await ttfbP50(gw.url + PATH, {
            "content-type": "application/json",
            authorization: `Bearer ${key}`,
          });
          figures = [p50 - direct];
          console.log(
            `${round} ${v.name}: TTFB p50 ${p50.toFixed(3)} ms, added ${(p50 - direct).toFixed(3)} ms`,
          );
        } else if (load === "json1") {
          await runWrk({ script, url: gw.url + PATH, ...one, seconds: 1 });
          const w = await runWrk({ script, url: gw.url + PATH, ...one, seconds });
          figures = [w.p50Ms - direct, w.p99Ms - direct99];
          console.log(
            `${round} ${v.name}: p50 ${w.p50Ms.toFixed(3)} ms, p99 ${w.p99Ms.toFixed(3)} ms; added ` +
              `${figures[0]!.toFixed(3)} / ${figures[1]!.toFixed(3)} ms`,
          );
        } else {
          const c = await loadCost(gw.pid, gw.url + PATH, script, seconds);
          figures = [c.perSecond, c.cpuMs * 1000];
          console.log(
            `${round} ${v.name}: ${Math.round(c.perSecond)}/s, ${(c.cpuMs * 1000).toFixed(1)} µs CPU each`,
          );
        }
        results.set(v.name, [...results.get(v.name) ?? [], figures]);
      } finally {
        await gw.stop();
      }
    }
  }
} finally {
  await mock.stop();
  await Deno.remove(dir, { recursive: true });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [name, runs] of results) {
  const col = (i: number) => median(runs.map((r) => r[i]!));
  console.log(
    load === "json1" || load === "ttfb1"
      ? `median ${name}: added p50 ${col(0).toFixed(3)} ms${
        load === "json1" ? `, added p99 ${col(1).toFixed(3)} ms` : ""
      }`
      : `median ${name}: ${Math.round(col(0))}/s, ${col(1).toFixed(1)} µs CPU each`,
  );
}
