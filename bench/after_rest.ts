/**
 * One-connection latency before and after the process rests, the order of the side by side (bench/side_by_side.ts:
 * its c=32 rounds, a rest, then its c=1 rounds). Every process serves 10 s at 32 connections twice, then each is
 * measured at one connection twice ("warm"), all rest REST seconds, and each is measured three times more: the
 * stream's time to its first body chunk (a Deno fetch client, bench/load.ts), or with AFTER_REST_LOAD=json the
 * JSON p50 (wrk), 1 s of warm-up and 5 s each, the mock's own taken off. The gateway's RSS is shown at each step.
 * docs/performance.md "After a rest" says what it found.
 *
 *   deno run -A --unstable-kv --unstable-no-legacy-abort bench/after_rest.ts [REST] [NAME:DIR ...]
 *
 * A NAME:DIR pair adds a gateway from another tree (a `git worktree` of the commit before), beside this one's.
 */
import { percentile, runLoad } from "./load.ts";
import { createKey, type Proc, startBareProxy, startChatMock, startGatewayProc } from "./procs.ts";
import { chat, PATH } from "./scenarios.ts";
import { ensureWrk, runWrk, wrkScript } from "./wrk.ts";

const restS = Number(Deno.args[0] ?? 60);
const json = Deno.env.get("AFTER_REST_LOAD") === "json";
const missing = await ensureWrk(console.error);
if (missing) throw new Error(missing);
const procs: Proc[] = [];
const dir = await Deno.makeTempDir({ prefix: "gw-after-rest-" });
const body = chat("Say hello in one short sentence.", !json);
const plain = { "content-type": "application/json" };

interface Side {
  name: string;
  url: string;
  headers: Record<string, string>;
  pid?: number;
}

try {
  const mock = await start(startChatMock());
  const sides: Side[] = [
    { name: "direct", url: mock.url, headers: plain },
    { name: "bare", url: (await start(startBareProxy(mock.url))).url, headers: plain },
  ];
  const trees = [["gateway", ""], ...Deno.args.slice(1).map((a) => a.split(":"))];
  for (const [name, tree] of trees) {
    const startGateway: typeof startGatewayProc = tree
      ? (await import(`${tree}/bench/procs.ts`)).startGatewayProc
      : startGatewayProc;
    const gw = await start(
      startGateway(mock.url, { env: { DATABASE_URL: "", DATA_DIR: `${dir}/kv-${name}`, LOG_LEVEL: "warn" } }),
    );
    const key = await createKey(gw.url);
    sides.push({
      name: name!,
      url: gw.url,
      headers: { ...plain, authorization: `Bearer ${key}` },
      pid: gw.pid,
    });
  }
  for (const s of sides) await Deno.writeTextFile(`${dir}/${s.name}.lua`, wrkScript(s.headers, body));
  for (const s of [...sides, ...sides]) {
    await runWrk({
      script: `${dir}/${s.name}.lua`,
      url: s.url + PATH,
      connections: 32,
      threads: 2,
      seconds: 10,
    });
  }
  const phases = [
    "warm",
    "warm again",
    `after ${restS} s of rest`,
    "after the rest, again",
    "and a third time",
  ];
  for (const [i, phase] of phases.entries()) {
    if (i === 2) await new Promise((r) => setTimeout(r, restS * 1000));
    const p50: Record<string, number> = {};
    const rss: string[] = [];
    for (const s of sides) {
      if (s.pid) rss.push(`${s.name} ${(await rssMiB(s.pid)).toFixed(1)}`);
      p50[s.name] = await oneConnection(s);
    }
    const added = sides.slice(1).map((s) => `${s.name} +${(p50[s.name]! - p50.direct!).toFixed(3)}`);
    const beyond = sides.slice(2).map((s) => `${s.name} ${(p50[s.name]! - p50.bare!).toFixed(3)}`);
    console.log(
      `${phase}: direct ${p50.direct!.toFixed(3)} ms; added ${added.join(", ")}; beyond the bare proxy ${
        beyond.join(", ")
      }; RSS MiB before it ${rss.join(", ")}`,
    );
  }
} finally {
  await Promise.all(procs.map((p) => p.stop()));
  await Deno.remove(dir, { recursive: true });
}

async function start(p: Promise<Proc>): Promise<Proc> {
  const proc = await p;
  procs.push(proc);
  return proc;
}

/** The p50 at one connection: a stream's first body chunk, or a JSON answer (wrk). */
async function oneConnection(s: Side): Promise<number> {
  if (json) {
    const run = { script: `${dir}/${s.name}.lua`, url: s.url + PATH, connections: 1, threads: 1 };
    await runWrk({ ...run, seconds: 1 });
    return (await runWrk({ ...run, seconds: 5 })).p50Ms;
  }
  const r = await runLoad({
    url: s.url + PATH,
    headers: s.headers,
    body,
    concurrency: 1,
    warmupSeconds: 1,
    seconds: 5,
  });
  if (r.errors) throw new Error(`${s.name}: ${r.errors} errors, the first: ${r.firstError}`);
  return percentile(r.ttfb, 50);
}

async function rssMiB(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) / 1024;
}
