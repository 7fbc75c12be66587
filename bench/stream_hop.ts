/**
 * What one JavaScript stream hop costs a Deno proxy (issue 18, README "Performance"): the bare proxy in front
 * of the Chat mock, its stream body handed to the response as it is (the runtime pipes it natively), through
 * one JavaScript ReadableStream (read, enqueue), and also decoded, parsed into SSE frames and encoded again —
 * the least any gateway that reads the frames must do. wrk, 32 connections, 2 s warm-up then 6 s each; CPU of
 * the proxy process from /proc. Run: `deno run -A bench/stream_hop.ts` (needs wrk: see bench/wrk.ts).
 */
import { startChatMock } from "./procs.ts";
import { bareProxyCost } from "./proxy_cost.ts";
import { ensureWrk, wrkScript } from "./wrk.ts";

const SECONDS = 6;
const FRAMES = 23; // the mock's stream: 20 content chunks, the finish, the usage chunk, [DONE]

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
    const c = await bareProxyCost(mock.url, { PUMP: pump }, script, SECONDS);
    if (pump === "") floor = c.cpuMs;
    const above = pump === "" ? "–" : `${((c.cpuMs - floor) * 1000 / FRAMES).toFixed(1)} µs`;
    rows.push(
      `| ${pump || "none (native pipe)"} | ${Math.round(c.perSecond).toLocaleString("en-US")} | ` +
        `${c.cpuMs.toFixed(3)} ms | ${above} |`,
    );
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
