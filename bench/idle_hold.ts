/**
 * Only the idle-stream part of the side by side (bench/side_by_side.ts, issue 18's memory target), without
 * its CPU loads: each named proxy is started fresh in front of the Chat mock, holds BENCH_SIDE_STREAMS
 * (10,000) idle streams (bench/idle_streams.ts), and its RSS per stream is printed.
 *
 *   deno run -A --unstable-kv bench/idle_hold.ts [bare | js | sse | byob | gateway | gateway-plain]…
 *   (default: bare gateway)
 *
 * `gateway-plain` is the gateway with HTTP_CONNECTION_DEADLINES=off: plain `Deno.serve`, without the
 * per-connection server the header and idle deadlines need (src/http/serve.ts).
 *
 * `js`, `sse` and `byob` are the bare proxy with that PUMP (its stream body through one JavaScript stream,
 * read with the default reader; also parsed into SSE frames; read BYOB like the gateway's): what a JavaScript
 * hop costs an idle stream before any gateway logic. A name
 * given twice runs twice (a fresh process each time). BENCH_IDLE_PROMPT_BYTES pads each request's message to
 * about that many bytes (default: the side by side's one-line prompt): what a stream keeps of its request.
 * BENCH_IDLE_SETTLE_S holds the streams that many seconds more and reads the RSS again (default 0: not).
 */
import { envNonNegative, envNum } from "./env.ts";
import { holdBody, holdThrough, perStreamKiB, projectedMiB, type ProxyHold } from "./idle_streams.ts";
import {
  createKey,
  type Proc,
  startBareProxy,
  startChatMock,
  startGatewayProc,
  stopOnSignal,
} from "./procs.ts";
import { num } from "./report.ts";
import { PATH } from "./scenarios.ts";

const PUMPS: Record<string, string | undefined> = { bare: undefined, js: "js", sse: "sse", byob: "byob" };

if (import.meta.main) {
  const names = Deno.args.length ? Deno.args : ["bare", "gateway"];
  for (const n of names) {
    if (n !== "gateway" && n !== "gateway-plain" && !(n in PUMPS)) throw new Error(`unknown proxy ${n}`);
  }
  const streams = envNum("BENCH_SIDE_STREAMS", 10_000);
  const settleMs = envNonNegative("BENCH_IDLE_SETTLE_S", 0) * 1000;
  const body = holdBody(Number(Deno.env.get("BENCH_IDLE_PROMPT_BYTES") ?? 0));
  const fdLimit = 2 * streams + 1024; // two sockets per proxied stream, one in the mock
  const procs: Proc[] = [];
  const unhook = stopOnSignal(procs);
  const dir = await Deno.makeTempDir({ prefix: "gw-bench-idle-" });
  const log = (s: string) => console.log(s);
  const holds: ProxyHold[] = [];
  try {
    const mock = await startChatMock(fdLimit);
    procs.push(mock);
    const json = { "content-type": "application/json" };
    for (const [i, name] of names.entries()) {
      let proc: Proc;
      let headers: Record<string, string>;
      if (name === "gateway" || name === "gateway-plain") {
        const plain: Record<string, string> = name === "gateway-plain"
          ? { HTTP_CONNECTION_DEADLINES: "off" }
          : {};
        proc = await startGatewayProc(mock.url, {
          env: { DATABASE_URL: "", DATA_DIR: `${dir}/kv-${i}`, ...plain },
          fdLimit,
        });
        procs.push(proc);
        headers = { ...json, authorization: `Bearer ${await createKey(proc.url)}` };
      } else {
        const pump = PUMPS[name];
        proc = await startBareProxy(mock.url, fdLimit, { env: pump ? { PUMP: pump } : {} });
        procs.push(proc);
        headers = { ...json, authorization: "Bearer up-alpha" };
      }
      holds.push(await holdThrough(name, proc, { path: PATH, headers, body }, { streams, log, settleMs }));
      await proc.stop();
    }
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
    unhook();
    await Deno.remove(dir, { recursive: true });
  }
  console.log("\n| Process | Streams open | RSS idle | RSS with all open | KB per stream | RSS projected |");
  console.log("| --- | ---: | ---: | ---: | ---: | ---: |");
  for (const h of holds) {
    console.log(
      `| ${h.name} | ${num(h.opened)} | ${num(h.idleKiB / 1024, 1)} MB | ${num(h.openKiB / 1024, 1)} MB | ${
        num(perStreamKiB(h), 1)
      } | ${num(projectedMiB(h), 1)} MB |`,
    );
  }
}
