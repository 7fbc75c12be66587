import process from "node:process";
import { runLoad, percentile } from "./load.ts";
import { startSim } from "./procs.ts";
const cpu = (pid: number) => { const f = Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1]!.split(" "); return (Number(f[11]) + Number(f[12])) * 10; };
const sim = await startSim();
try {
  const body = JSON.stringify({ model: "k3", messages: [{ role: "user", content: "hi" }] });
  for (const c of [1, 4, 32]) {
    const s0 = cpu(sim.pid); const c0 = process.cpuUsage(); const t0 = performance.now();
    const r = await runLoad({ url: sim.url + "/v1/chat/completions", headers: { "content-type": "application/json", authorization: "Bearer x" }, body, concurrency: c, warmupSeconds: 0, seconds: 3 });
    const wall = performance.now() - t0; const cu = process.cpuUsage(c0);
    console.log(c, Math.round(r.rps), percentile(r.latency, 50).toFixed(3), percentile(r.latency, 99).toFixed(3), "sim cpu%", ((cpu(sim.pid) - s0) / wall * 100).toFixed(0), "client cpu%", ((cu.user + cu.system) / 1000 / wall * 100).toFixed(0));
  }
} finally { await sim.stop(); }
