/**
 * Where a stream's first byte spends its time at one connection, leg by leg, for the bare Deno proxy and the
 * gateway (docs/performance.md "Stream TTFB at c=1"). Sequential streams through each, warm, are captured on
 * loopback (tcpdump on lo: the kernel's timestamps, nothing added to the processes), and each stream is cut
 * into three legs: the client's request reaching the proxy → the proxy's upstream request (pre), → the mock's
 * first bytes (upstream), → the proxy's first bytes to the client (post). A client's p50 mixes the legs with
 * its own cost; the legs show which side of the upstream call a difference is on.
 *
 *   deno run -A --unstable-kv --unstable-no-legacy-abort bench/first_byte_legs.ts [ROUNDS]
 *
 * Each round is a fresh process of each side, warmed at 32 connections first (bench/ab.ts). Env: LEGS_SECONDS
 * (each capture, default 5), LEGS_WARMUP (seconds at 32 connections before it, default 5). Needs tcpdump
 * (installed with apt-get when missing) and the right to capture on lo.
 */
import { envNum } from "./env.ts";
import { percentile, runLoad } from "./load.ts";
import { createKey, type Proc, startBareProxy, startChatMock, startGatewayProc } from "./procs.ts";
import { chat, PATH } from "./scenarios.ts";
import { ensureDebianTool, ensureWrk, runWrk, wrkScript } from "./wrk.ts";

/** ms per stream, in capture order. */
export interface Legs {
  pre: number[];
  upstream: number[];
  post: number[];
  total: number[];
}

const SEGMENT = /^(\d+\.\d+) IP [\d.]+\.(\d+) > [\d.]+\.(\d+): .* length (\d+)$/;

/**
 * The legs of each stream in `tcpdump -tt -n` output of sequential streams through the proxy on `proxyPort`
 * to the mock on `mockPort`. Segments without payload (handshakes, ACKs) are not steps; a stream's later
 * segments in the same direction (the rest of a request or of an answer) are skipped until the next step.
 */
export function firstByteLegs(capture: string, proxyPort: number, mockPort: number): Legs {
  const legs: Legs = { pre: [], upstream: [], post: [], total: [] };
  let step = 0;
  let asked = 0, sent = 0, answered = 0;
  for (const line of capture.split("\n")) {
    const m = SEGMENT.exec(line.trim());
    if (!m || Number(m[4]) === 0) continue;
    const ms = Number(m[1]) * 1000, from = Number(m[2]), to = Number(m[3]);
    if (step === 0 && to === proxyPort) [asked, step] = [ms, 1];
    else if (step === 1 && to === mockPort) [sent, step] = [ms, 2];
    else if (step === 2 && from === mockPort) [answered, step] = [ms, 3];
    else if (step === 3 && from === proxyPort) {
      legs.pre.push(sent - asked);
      legs.upstream.push(answered - sent);
      legs.post.push(ms - answered);
      legs.total.push(ms - asked);
      step = 0;
    }
  }
  return legs;
}

/** The median of `xs` (load.ts `percentile`, nearest rank). */
const p50 = (xs: readonly number[]): number => percentile(Float64Array.from(xs).sort(), 50);

/** Captures loopback traffic to and from `ports` while `run` runs; returns what tcpdump wrote. */
async function capturing(ports: number[], run: () => Promise<unknown>): Promise<string> {
  const filter = `tcp and (${ports.map((p) => `port ${p}`).join(" or ")})`;
  const child = new Deno.Command("tcpdump", {
    args: ["-tt", "-n", "-l", "-i", "lo", "-s", "96", filter],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const out = new Response(child.stdout).text();
  // tcpdump says "listening on lo" on stderr once the capture is open.
  const err = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let said = "";
  while (!said.includes("listening on")) {
    const { done, value } = await err.read();
    if (done) throw new Error(`tcpdump did not start: ${said.trim()}`);
    said += value;
  }
  try {
    await run();
  } finally {
    await new Promise((r) => setTimeout(r, 200)); // the last segments reach the capture
    child.kill("SIGTERM");
    await err.cancel();
    await child.status;
  }
  return await out;
}

if (import.meta.main) {
  const rounds = Number(Deno.args[0] ?? 3);
  const seconds = envNum("LEGS_SECONDS", 5);
  const warmup = envNum("LEGS_WARMUP", 5);
  for (const tool of [await ensureWrk(console.error), await ensureDebianTool("tcpdump", console.error)]) {
    if (tool) throw new Error(tool);
  }
  const body = chat("Say hello in one short sentence.", true);
  const mock = await startChatMock();
  const dir = await Deno.makeTempDir({ prefix: "gw-legs-" });
  const sides: Record<string, Legs[]> = { bare: [], gateway: [] };
  try {
    for (let round = 0; round < rounds; round++) {
      for (const side of Object.keys(sides)) {
        const proc: Proc = side === "bare"
          ? await startBareProxy(mock.url)
          : await startGatewayProc(mock.url, { env: { DATABASE_URL: "", DATA_DIR: `${dir}/kv-${round}` } });
        try {
          const key = side === "bare" ? "up-alpha" : await createKey(proc.url);
          const headers = { "content-type": "application/json", authorization: `Bearer ${key}` };
          const script = `${dir}/${side}.lua`;
          await Deno.writeTextFile(script, wrkScript(headers, body));
          await runWrk({ script, url: proc.url + PATH, connections: 32, threads: 2, seconds: warmup });
          const ports = [Number(new URL(proc.url).port), Number(new URL(mock.url).port)] as const;
          const capture = await capturing([...ports], async () => {
            const r = await runLoad({
              url: proc.url + PATH,
              headers,
              body,
              concurrency: 1,
              warmupSeconds: 0,
              seconds,
            });
            if (r.errors) throw new Error(`${side}: ${r.errors} errors, the first: ${r.firstError}`);
          });
          const legs = firstByteLegs(capture, ...ports);
          sides[side]!.push(legs);
          console.log(
            `${round} ${side}: ${legs.total.length} streams; p50 pre ${p50(legs.pre).toFixed(3)}, upstream ${
              p50(legs.upstream).toFixed(3)
            }, post ${p50(legs.post).toFixed(3)}, total ${p50(legs.total).toFixed(3)} ms`,
          );
        } finally {
          await proc.stop();
        }
      }
    }
  } finally {
    await mock.stop();
    await Deno.remove(dir, { recursive: true });
  }
  for (const [side, runs] of Object.entries(sides)) {
    const leg = (k: keyof Legs) => p50(runs.map((r) => p50(r[k]))).toFixed(3);
    console.log(
      `median round ${side}: pre ${leg("pre")}, upstream ${leg("upstream")}, post ${leg("post")}, total ${
        leg("total")
      } ms`,
    );
  }
}
