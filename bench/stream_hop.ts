/**
 * What one JavaScript stream hop costs a Deno proxy (issue 18, README "Performance"): the bare proxy in front
 * of the Chat mock, its stream body handed to the response as it is (the runtime pipes it natively), through
 * one JavaScript ReadableStream (read, enqueue), and also decoded, parsed into SSE frames and encoded again —
 * the least any gateway that reads the frames must do. wrk, 32 connections, 2 s warm-up then 6 s each; CPU of
 * the proxy process from /proc. Run: `deno run -A bench/stream_hop.ts` (needs wrk: see bench/wrk.ts).
 */
import { freePort, startChatMock, waitReady } from "./procs.ts";
import { ensureWrk, runWrk, wrkScript } from "./wrk.ts";

const SECONDS = 6;
const FRAMES = 23; // the mock's stream: 20 content chunks, the finish, the usage chunk, [DONE]

async function cpuMs(pid: number): Promise<number> {
  const f = (await Deno.readTextFile(`/proc/${pid}/stat`)).split(") ")[1]!.split(" ");
  return (Number(f[11]) + Number(f[12])) * 1000 / 100; // utime + stime, at the usual 100 ticks per second
}

const missing = await ensureWrk(console.log);
if (missing) {
  console.log(missing);
  Deno.exit(0);
}
const mock = await startChatMock();
const body = JSON.stringify({ model: "k3", stream: true, messages: [{ role: "user", content: "hi" }] });
const script = await Deno.makeTempFile({ suffix: ".lua" });
await Deno.writeTextFile(script, wrkScript({ "content-type": "application/json" }, body));
const rows: string[] = [];
let floor = 0;
try {
  for (const pump of ["", "js", "sse"]) {
    const port = freePort();
    const proxy = new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-net", "--allow-env", "bench/bare_proxy.ts"],
      env: { UPSTREAM: mock.url, PORT: String(port), PUMP: pump },
      stdout: "null",
      stderr: "inherit",
    }).spawn();
    const url = `http://127.0.0.1:${port}/v1/chat/completions`;
    try {
      await waitReady(`http://127.0.0.1:${port}/`);
      await runWrk({ script, url, connections: 32, threads: 2, seconds: 2 });
      const before = await cpuMs(proxy.pid);
      const r = await runWrk({ script, url, connections: 32, threads: 2, seconds: SECONDS });
      const perStream = (await cpuMs(proxy.pid) - before) / r.requests;
      if (pump === "") floor = perStream;
      const above = pump === "" ? "–" : `${((perStream - floor) * 1000 / FRAMES).toFixed(1)} µs`;
      rows.push(
        `| ${pump || "none (native pipe)"} | ${Math.round(r.requests / SECONDS).toLocaleString("en-US")} | ` +
          `${perStream.toFixed(3)} ms | ${above} |`,
      );
    } finally {
      proxy.kill("SIGKILL");
      await proxy.status;
    }
  }
} finally {
  await mock.stop();
  await Deno.remove(script);
}
console.log(
  "| Bare proxy's stream body | Streams/s | CPU per stream | CPU per frame above the native pipe |",
);
console.log("| --- | ---: | ---: | ---: |");
for (const row of rows) console.log(row);
