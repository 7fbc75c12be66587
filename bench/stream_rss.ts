/**
 * RSS under the side by side's stream load (wrk, 32 connections, bench/side_by_side.ts), in alternated rounds
 * of named variants, each a fresh process in front of one chat mock (bench/chat_mock.ts):
 *
 *   deno run -A --unstable-kv bench/stream_rss.ts ROUNDS VARIANT…
 *
 * A VARIANT is `name[:K=V[,K=V…]]`; a name starting with `bare` is the bare Deno proxy, any other the gateway
 * (main.ts on a KV file of its own, model k3, billing on, through bench/mem_probe.ts so its V8 heap is sampled
 * from inside), with the start task's variables (procs.ts withStartEnv: `DENO_V8_FLAGS=` runs one with
 * V8's defaults). `V8=flag;flag` passes V8 flags (`--v8-flags=`), any other K=V is added to the environment
 * (DATABASE_URL=memory, PUMP=byob for the bare proxy). STREAM_RSS_SECONDS (default 12), STREAM_RSS_WARMUP
 * (default 2), STREAM_RSS_JSON=1: a JSON run of the same length before the streams (as the side by side does).
 */
import { envNum } from "./env.ts";
import {
  ADMIN_TOKEN,
  createKey,
  freePort,
  memoryOf,
  type Proc,
  ROOT,
  startChatMock,
  stopOnSignal,
  waitReady,
  withStartEnv,
} from "./procs.ts";
import { chat, PATH } from "./scenarios.ts";
import { runWrk, wrkScript } from "./wrk.ts";

const SECONDS = envNum("STREAM_RSS_SECONDS", 12);
const WARMUP = envNum("STREAM_RSS_WARMUP", 2);
const WITH_JSON = Deno.env.get("STREAM_RSS_JSON") === "1";
const STREAM_BODY = chat("Tell me a story.", true);
const JSON_BODY = chat("Say hello in one short sentence.", false);
const MiB = 1024 * 1024;

interface Variant {
  name: string;
  bare: boolean;
  v8: string[];
  env: Record<string, string>;
}

function parseVariant(arg: string): Variant {
  const [name, rest] = arg.split(/:(.*)/s) as [string, string | undefined];
  const env: Record<string, string> = {};
  let v8: string[] = [];
  for (const kv of rest ? rest.split(",") : []) {
    const [k, v] = kv.split(/=(.*)/s) as [string, string];
    if (k === "V8") v8 = v.split(";");
    else env[k] = v;
  }
  return { name, bare: name.startsWith("bare"), v8, env };
}

function spawnProc(name: string, args: string[], env: Record<string, string>, url: string): Proc {
  const child = new Deno.Command(Deno.execPath(), { args, cwd: ROOT, env, stdin: "null", stdout: "null" })
    .spawn();
  return {
    name,
    pid: child.pid,
    url,
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      const t = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch { /* gone */ }
      }, 5_000);
      await child.status;
      clearTimeout(t);
    },
  };
}

async function start(v: Variant, mockUrl: string, dir: string, probe: string): Promise<Proc> {
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const flags = v.v8.length ? [`--v8-flags=${v.v8.join(",")}`] : [];
  const p = v.bare
    ? spawnProc(v.name, [
      "run",
      "--allow-net",
      "--allow-env",
      "--allow-write",
      "--allow-read",
      "--allow-sys",
      ...flags,
      "bench/mem_probe.ts",
    ], {
      MEM_PROBE_MAIN: "./bare_proxy.ts",
      MEM_PROBE_FILE: probe,
      UPSTREAM: mockUrl,
      PORT: String(port),
      HOST: "127.0.0.1",
      ...v.env,
    }, url)
    : spawnProc(
      v.name,
      ["run", "-A", "--unstable-kv", "--unstable-no-legacy-abort", ...flags, "bench/mem_probe.ts"],
      withStartEnv({
        PORT: String(port),
        HOST: "127.0.0.1",
        DATA_DIR: dir,
        ADMIN_TOKEN,
        ALPHA_UPSTREAM_URL: mockUrl,
        ALPHA_UPSTREAM_KEY: "up-alpha",
        MAX_INFLIGHT_UPSTREAM: "0",
        MEM_PROBE_FILE: probe,
        ...v.env,
      }),
      url,
    );
  try {
    await waitReady(url + (v.bare ? "/" : "/v1/models"));
  } catch (err) {
    await p.stop();
    throw err;
  }
  return p;
}

interface Sample {
  t: number;
  malloced: number;
  peakMalloced: number;
  allocated?: number;
  /** Taken right after a full collection (SIGUSR2 with --expose-gc). */
  gc?: boolean;
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  spaces: Record<string, number>;
  used: Record<string, number>;
}

interface Split {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  newSpace: number;
  oldSpace: number;
  external: number;
}

const splitOf = (s: Sample): Split => ({
  rss: s.rss / MiB,
  heapTotal: s.heapTotal / MiB,
  heapUsed: s.heapUsed / MiB,
  newSpace: (s.spaces["new_space"] ?? 0) / MiB,
  oldSpace: (s.spaces["old_space"] ?? 0) / MiB,
  external: s.external / MiB,
});

/** "old_space 17.9/44.5, …" (MiB used / size) for the spaces that hold anything. */
const usedBySpace = (s: Sample) =>
  Object.entries(s.used).filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ${f1(n / MiB)}/${f1((s.spaces[k] ?? 0) / MiB)}`).join(", ");

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

/** The top allocation sites of a sampling heap profile, in KiB per stream (`streams` in its window). */
function printAllocationSites(path: string, streams: number): void {
  const sites = new Map<string, number>();
  const files = new Map<string, number>();
  let total = 0;
  const walk = (n: ProfileNode) => {
    const f = n.callFrame;
    const site = `${f.functionName || "(anonymous)"} ${f.url.replace(/^.*\/(src|ext|bench)\//, "$1/")}:${
      f.lineNumber + 1
    }`;
    sites.set(site, (sites.get(site) ?? 0) + n.selfSize);
    const file = f.url.replace(/^.*\/(src|ext|bench)\//, "$1/") || "(builtins)";
    files.set(file, (files.get(file) ?? 0) + n.selfSize);
    total += n.selfSize;
    n.children.forEach(walk);
  };
  walk((JSON.parse(Deno.readTextFileSync(path)) as { head: ProfileNode }).head);
  console.log(`  sampled allocation: ${f1(total / streams / 1024)} KiB per stream; top sites:`);
  const top = (m: Map<string, number>, n: number) =>
    [...m].sort((a, b) => b[1] - a[1]).slice(0, n)
      .map(([k, bytes]) => `    ${f1(bytes / streams / 1024).padStart(6)} KiB  ${k}`).join("\n");
  console.log(top(sites, 25));
  console.log(`  by file:\n${top(files, 15)}`);
}

interface Run {
  rps: number;
  idleMiB: number;
  peakMiB: number;
  meanMiB: number;
  hwmMiB: number;
  /** At the probe's sample with the highest RSS in the measured window. */
  split?: Split;
  maxHeapTotal?: number;
  /** At the probe's last sample before the load. */
  idleSplit?: Split;
}

async function oneRun(v: Variant, mockUrl: string, dir: string): Promise<Run> {
  const probe = `${dir}/probe-${crypto.randomUUID()}.jsonl`;
  const p = await start(v, mockUrl, `${dir}/kv-${crypto.randomUUID()}`, probe);
  try {
    const auth = v.bare ? "Bearer up-alpha" : `Bearer ${await createKey(p.url)}`;
    const headers = { "content-type": "application/json", authorization: auth };
    const idle = await memoryOf(p.pid);
    const tIdle = performance.now();
    const mk = async (body: string) => {
      const s = `${dir}/${crypto.randomUUID()}.lua`;
      await Deno.writeTextFile(s, wrkScript(headers, body));
      return { script: s, url: p.url + PATH, connections: 32, threads: 2 };
    };
    if (WITH_JSON) await runWrk({ ...await mk(JSON_BODY), seconds: SECONDS });
    const run = await mk(STREAM_BODY);
    await runWrk({ ...run, seconds: WARMUP });
    const t0 = performance.now();
    const rss: number[] = [];
    let peakKinds = "";
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const st = await Deno.readTextFile(`/proc/${p.pid}/status`);
        const kib = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, "m").exec(st)?.[1] ?? NaN);
        if (kib("VmRSS") / 1024 > Math.max(0, ...rss)) {
          peakKinds = `anon ${f1(kib("RssAnon") / 1024)}, file ${f1(kib("RssFile") / 1024)}, shmem ${
            f1(kib("RssShmem") / 1024)
          } MiB, threads ${st.match(/^Threads:\s+(\d+)/m)?.[1]}`;
        }
        rss.push(kib("VmRSS") / 1024);
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    const gcAt = v.v8.includes("--expose-gc")
      ? setTimeout(() => Deno.kill(p.pid, "SIGUSR2"), SECONDS * 500)
      : undefined;
    const heapSample = v.env.MEM_PROBE_HEAP_SAMPLE === "1" || v.env.MEM_PROBE_HEAP_SAMPLE === "old";
    const sampleAt = heapSample
      ? [0.25, 0.75].map((f) => setTimeout(() => Deno.kill(p.pid, "SIGUSR1"), SECONDS * 1000 * f))
      : [];
    const w = await runWrk({ ...run, seconds: SECONDS });
    clearTimeout(gcAt);
    sampleAt.forEach(clearTimeout);
    sampling = false;
    await sampler;
    const end = await memoryOf(p.pid);
    console.log(`  ${v.name} RSS at peak by kind: ${peakKinds}`);
    const out: Run = {
      rps: w.rps,
      idleMiB: idle.rssKiB / 1024,
      peakMiB: Math.max(...rss),
      meanMiB: rss.reduce((a, b) => a + b, 0) / rss.length,
      hwmMiB: end.hwmKiB / 1024,
    };
    await new Promise((r) => setTimeout(r, 300));
    if (heapSample) printAllocationSites(`${probe}.heapprofile`, w.rps * SECONDS / 2);
    const lines = (await Deno.readTextFile(probe)).trim().split("\n").map((l) => JSON.parse(l) as Sample);
    // The probe's clock started with the process: its last sample is now.
    const last = lines[lines.length - 1]!.t;
    const gcd = lines.find((s) => s.gc);
    if (gcd) console.log(`  live after gc() under load: ${usedBySpace(gcd)}; rss ${f1(gcd.rss / MiB)}`);
    const win = lines.filter((s) => s.t >= last - (performance.now() - t0) && s.t <= last - 300);
    const top = win.reduce((a, b) => (b.rss > a.rss ? b : a));
    console.log(`  at peak, used/size by space: ${usedBySpace(top)}`);
    const [a, b] = [win[0]!, win[win.length - 1]!];
    console.log(
      `  V8 malloc at peak ${f1(top.malloced / MiB)} MiB (peak ${
        f1(top.peakMalloced / MiB)
      }); heap allocated ${
        f1(((b.allocated ?? NaN) - (a.allocated ?? NaN)) / (w.rps * (b.t - a.t) / 1000) / 1024)
      } KiB per stream`,
    );
    out.split = splitOf(top);
    out.maxHeapTotal = Math.max(...win.map((s) => s.heapTotal)) / MiB;
    const idleT = last - (performance.now() - tIdle);
    out.idleSplit = splitOf(lines.findLast((s) => s.t <= idleT) ?? lines[0]!);
    return out;
  } finally {
    await p.stop();
  }
}

const f1 = (n: number) => n.toFixed(1);
const rounds = Number(Deno.args[0]);
const variants = Deno.args.slice(1).map(parseVariant);
if (!(rounds > 0) || variants.length === 0) throw new Error("usage: stream_rss.ts ROUNDS VARIANT…");
const procs: Proc[] = [];
const unhook = stopOnSignal(procs);
const dir = await Deno.makeTempDir({ prefix: "gw-stream-rss-" });
const mock = await startChatMock();
procs.push(mock);
const results = new Map<string, Run[]>(variants.map((v) => [v.name, []]));
try {
  for (let r = 0; r < rounds; r++) {
    for (const v of variants) {
      const x = await oneRun(v, mock.url, dir);
      results.get(v.name)!.push(x);
      const s = x.split;
      const i = x.idleSplit!;
      console.log(
        `round ${r + 1} ${v.name}: ${Math.round(x.rps)} streams/s; RSS idle ${f1(x.idleMiB)}, peak ${
          f1(x.peakMiB)
        }, mean ${f1(x.meanMiB)}, HWM ${f1(x.hwmMiB)} MiB` +
          (s
            ? `; at peak: heap ${f1(s.heapUsed)}/${f1(s.heapTotal)} (new ${f1(s.newSpace)}, old ${
              f1(s.oldSpace)
            }), external ${f1(s.external)}, rest ${f1(s.rss - s.heapTotal - s.external)}; max heapTotal ${
              f1(x.maxHeapTotal!)
            }; idle: heap ${f1(i.heapUsed)}/${f1(i.heapTotal)} (new ${f1(i.newSpace)}, old ${
              f1(i.oldSpace)
            }), external ${f1(i.external)}, rest ${f1(i.rss - i.heapTotal - i.external)}`
            : ""),
      );
    }
  }
  console.log("\nmedians:");
  const med = (a: number[]) => a.toSorted((x, y) => x - y)[Math.floor(a.length / 2)]!;
  for (const v of variants) {
    const rs = results.get(v.name)!;
    console.log(
      `${v.name}: ${Math.round(med(rs.map((x) => x.rps)))} streams/s; RSS peak ${
        f1(med(rs.map((x) => x.peakMiB)))
      }, mean ${f1(med(rs.map((x) => x.meanMiB)))}, idle ${f1(med(rs.map((x) => x.idleMiB)))} MiB`,
    );
  }
} finally {
  await mock.stop();
  unhook();
  await Deno.remove(dir, { recursive: true });
}
