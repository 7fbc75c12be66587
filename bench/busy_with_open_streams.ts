/**
 * JSON requests at 32 connections (wrk) while many idle streams stay open through the same gateway: what each
 * request pays for the streams it does not touch. Every gateway variant is started fresh in front of the Chat
 * mock, runs the JSON load with no stream open, then opens BENCH_OPEN_STREAMS (5,000) idle streams
 * (bench/idle_streams.ts: the mock sends the first content chunk, then nothing) and runs it again; rounds
 * alternate the variants.
 *
 *   deno run -A --unstable-kv bench/busy_with_open_streams.ts ROUNDS NAME[:DIR=<worktree>] …
 *
 * A variant with DIR runs the gateway of another work tree (e.g. a `git worktree` of an older commit).
 */
import { envNum } from "./env.ts";
import { holdBody, holdIdleStreams } from "./idle_streams.ts";
import { createKey, type Proc, startChatMock, stopOnSignal } from "./procs.ts";
import { chat, PATH } from "./scenarios.ts";
import { runWrk, wrkScript } from "./wrk.ts";

const rounds = Number(Deno.args[0]);
const variants = Deno.args.slice(1).map((arg) => {
  const [name, dir] = arg.split(":DIR=");
  return { name: name!, dir };
});
if (!Number.isInteger(rounds) || rounds < 1 || variants.length === 0) {
  console.error("usage: bench/busy_with_open_streams.ts ROUNDS NAME[:DIR=<worktree>] …");
  Deno.exit(2);
}
const streams = envNum("BENCH_OPEN_STREAMS", 5_000);
const seconds = envNum("BENCH_OPEN_SECONDS", 5);
const fdLimit = 2 * streams + 1024;
const procs: Proc[] = [];
const unhook = stopOnSignal(procs);
const dir = await Deno.makeTempDir({ prefix: "gw-bench-busy-" });
const rows: string[] = [];
try {
  const mock = await startChatMock(fdLimit);
  procs.push(mock);
  for (let round = 0; round < rounds; round++) {
    for (const v of variants) {
      const { startGatewayProc } = await import(v.dir ? `${v.dir}/bench/procs.ts` : "./procs.ts");
      const gw: Proc = await startGatewayProc(mock.url, {
        env: { DATABASE_URL: "", DATA_DIR: `${dir}/${v.name}-${round}` },
        fdLimit,
      });
      procs.push(gw);
      const headers = {
        "content-type": "application/json",
        authorization: `Bearer ${await createKey(gw.url)}`,
      };
      const script = `${dir}/json.lua`;
      await Deno.writeTextFile(script, wrkScript(headers, chat("Say hello in one short sentence.", false)));
      const load = { script, url: gw.url + PATH, connections: 32, threads: 2 };
      await runWrk({ ...load, seconds: 2 }); // warm-up
      const idle = await runWrk({ ...load, seconds });
      const held = await holdIdleStreams(
        { url: gw.url, path: PATH, headers, body: holdBody(), n: streams, batch: 500, timeoutMs: 180_000 },
        () => runWrk({ ...load, seconds }),
      );
      if (held.errors > 0 || !held.value) throw new Error(`streams did not open: ${held.firstError}`);
      const open = held.value;
      const line = `| ${round} | ${v.name} | ${Math.round(idle.rps)} / ${idle.p50Ms.toFixed(2)} ms | ${
        Math.round(open.rps)
      } / ${open.p50Ms.toFixed(2)} ms (${held.opened} open, ramp ${(held.rampMs / 1000).toFixed(1)} s) |`;
      console.log(line);
      rows.push(line);
      await gw.stop();
    }
  }
} finally {
  await Promise.all(procs.map((p) => p.stop()));
  unhook();
  await Deno.remove(dir, { recursive: true });
}
console.log("\n| Round | Gateway | JSON req/s / p50, no stream open | the same with the streams open |");
console.log("| ---: | --- | ---: | ---: |");
for (const r of rows) console.log(r);
