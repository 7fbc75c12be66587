/**
 * What the upstream request's write costs per request, and how that depends on the rate (issue 18, JSON
 * target; bench/RESULTS.md "JSON path: the gateway's own work"). Each process is profiled (--cpu-prof) under
 * the side by side's JSON load (wrk, 2 threads × 32 connections, the Chat mock): the bare proxy with the
 * gateway's upstream client (CLIENT=wire) at its own rate, the same proxy slowed by a busy loop per request
 * (SPIN_US) to about the gateway's rate, and the gateway. Printed per request: the rate, the busy CPU time, and
 * the time inside `op_write` (the socket write of the upstream request: on loopback the kernel delivers it to
 * the mock and wakes it up within that call).
 *
 *   deno run -A --unstable-kv bench/write_cost.ts [SPIN_US]   (default 55)
 */
import { createKey, type Proc, startBareProxy, startChatMock, startGatewayProc } from "./procs.ts";
import { PROFILE_ROOT, readProfiles, topSelf } from "./profile.ts";
import { num } from "./report.ts";
import { chat, PATH } from "./scenarios.ts";
import { runWrk, wrkScript } from "./wrk.ts";

interface Cost {
  name: string;
  rps: number;
  busyUs: number;
  writeUs: number;
}

/** Profiles `proc` (started with --cpu-prof into `profDir`) under 2 s of warm-up and 6 s of measured load. */
async function profiled(
  name: string,
  proc: Proc,
  headers: Record<string, string>,
  profDir: string,
  startedAt: number,
): Promise<Cost> {
  const script = `${profDir}.lua`;
  await Deno.writeTextFile(script, wrkScript(headers, chat("Say hello in one short sentence.", false)));
  const run = { script, url: proc.url + PATH, connections: 32, threads: 2 };
  await runWrk({ ...run, seconds: 2 });
  const from = performance.now() - startedAt;
  const w = await runWrk({ ...run, seconds: 6 });
  const to = performance.now() - startedAt;
  await proc.stop();
  const [p] = await readProfiles(profDir);
  if (!p) throw new Error(`${name}: no profile written`);
  // The profile's clock starts about when the process does: a quarter second trimmed at each end.
  const t = topSelf(p.profile, PROFILE_ROOT, 1_000, { fromMs: from + 250, toMs: to - 250 });
  const usPerSample = (to - from - 500) * 1000 / t.total;
  const requests = w.requests * (to - from - 500) / (to - from);
  const write = t.top.find((s) => s.name === "op_write")?.samples ?? 0;
  return {
    name,
    rps: w.rps,
    busyUs: t.busy * usPerSample / requests,
    writeUs: write * usPerSample / requests,
  };
}

if (import.meta.main) {
  const spin = Deno.args[0] ?? "55";
  const mock = await startChatMock();
  const dir = await Deno.makeTempDir({ prefix: "gw-bench-write-" });
  const costs: Cost[] = [];
  try {
    const upstream = { "content-type": "application/json", authorization: "Bearer up-alpha" };
    for (
      const [name, env] of [["bare proxy, CLIENT=wire", {}], [`the same, SPIN_US=${spin}`, {
        SPIN_US: spin,
      }]] as const
    ) {
      const profDir = `${dir}/bare-${costs.length}`;
      const startedAt = performance.now();
      const bare = await startBareProxy(mock.url, undefined, {
        env: { CLIENT: "wire", ...env },
        cpuProfDir: profDir,
      });
      costs.push(await profiled(name, bare, upstream, profDir, startedAt));
    }
    const startedAt = performance.now();
    const gw = await startGatewayProc(mock.url, {
      cpuProfDir: `${dir}/gateway`,
      env: { DATABASE_URL: "", DATA_DIR: `${dir}/kv` },
    });
    const headers = {
      "content-type": "application/json",
      authorization: `Bearer ${await createKey(gw.url)}`,
    };
    costs.push(await profiled("this gateway", gw, headers, `${dir}/gateway`, startedAt));
  } finally {
    await mock.stop();
    await Deno.remove(dir, { recursive: true });
  }
  console.log("| Process | Requests/s | Busy CPU per request | In op_write per request |");
  console.log("| --- | ---: | ---: | ---: |");
  for (const c of costs) {
    console.log(`| ${c.name} | ${num(c.rps)} | ${c.busyUs.toFixed(1)} µs | ${c.writeUs.toFixed(1)} µs |`);
  }
}
