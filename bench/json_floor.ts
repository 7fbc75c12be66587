/**
 * What metering costs a Deno proxy on a JSON answer (issue 18, README "Performance"): the bare proxy in front
 * of the Chat mock as it is, parsing the request and the answer (`METER=parse`: the least a gateway that
 * meters must read), and also making one usage row per request durable in Deno KV with the gateway's group
 * commit (`METER=kv`); the same two with the gateway's own upstream client instead of Deno's fetch (`CLIENT=wire`:
 * what fetch itself costs); then the gateway itself on its default KV file (model k3, native Chat pass-through,
 * billing on). wrk, 32 connections, 2 s warm-up then 6 s each; CPU of the serving process from /proc.
 * Run: `deno run -A --unstable-kv --unstable-no-legacy-abort bench/json_floor.ts` (needs wrk: bench/wrk.ts).
 */
import { createKey, startChatMock, startGatewayProc } from "./procs.ts";
import { bareProxyCost, loadCost, type ProxyCost } from "./proxy_cost.ts";
import { chat, PATH } from "./scenarios.ts";
import { ensureWrk, wrkScript } from "./wrk.ts";

const SECONDS = 6;

const missing = await ensureWrk(console.log);
if (missing) {
  console.log(missing);
  Deno.exit(0);
}
const mock = await startChatMock();
const dir = await Deno.makeTempDir({ prefix: "gw-json-floor-" });
const body = chat("Say hello in one short sentence.", false);
const script = `${dir}/bare.lua`;
await Deno.writeTextFile(script, wrkScript({ "content-type": "application/json" }, body));
const rows: [string, ProxyCost][] = [];
try {
  for (const [meter, client] of [["", ""], ["parse", ""], ["kv", ""], ["", "wire"], ["kv", "wire"]]) {
    const env = { METER: meter!, CLIENT: client! };
    const name = Object.entries(env).filter(([, v]) => v).map(([k, v]) => `${k}=${v}`).join(", ");
    rows.push([`bare proxy${name ? `, ${name}` : ""}`, await bareProxyCost(mock.url, env, script, SECONDS)]);
  }
  const gw = await startGatewayProc(mock.url, { env: { DATABASE_URL: "", DATA_DIR: `${dir}/kv` } });
  try {
    const gwScript = `${dir}/gateway.lua`;
    const auth = { "content-type": "application/json", authorization: `Bearer ${await createKey(gw.url)}` };
    await Deno.writeTextFile(gwScript, wrkScript(auth, body));
    rows.push([
      "this gateway (KV file, billing on)",
      await loadCost(gw.pid, gw.url + PATH, gwScript, SECONDS),
    ]);
  } finally {
    await gw.stop();
  }
} finally {
  await mock.stop();
  await Deno.remove(dir, { recursive: true });
}
const floor = rows[0]![1];
console.log("| Serving process | Requests/s | × bare proxy | CPU per request | CPU above the bare proxy |");
console.log("| --- | ---: | ---: | ---: | ---: |");
for (const [name, c] of rows) {
  console.log(
    `| ${name} | ${Math.round(c.perSecond).toLocaleString("en-US")} | ${
      (c.perSecond / floor.perSecond).toFixed(2)
    }× | ` +
      `${c.cpuMs.toFixed(3)} ms | ${
        c === floor ? "–" : `${((c.cpuMs - floor.cpuMs) * 1000).toFixed(1)} µs`
      } |`,
  );
}
