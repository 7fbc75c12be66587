/**
 * One bare proxy variant (bench/bare_proxy.ts with `env`) in front of the Chat mock under wrk, 32 connections,
 * 2 s warm-up then `seconds`: its rate and its process's CPU per response (/proc). Shared by the runtime-floor
 * scripts (stream_hop.ts, json_floor.ts).
 */
import { freePort, waitReady } from "./procs.ts";
import { runWrk } from "./wrk.ts";

export interface ProxyCost {
  perSecond: number;
  cpuMs: number;
}

/** utime + stime of a process in ms, at the usual 100 ticks per second. */
export async function processCpuMs(pid: number): Promise<number> {
  const f = (await Deno.readTextFile(`/proc/${pid}/stat`)).split(") ")[1]!.split(" ");
  return (Number(f[11]) + Number(f[12])) * 1000 / 100;
}

/** wrk against `url` (a process `pid` serves it): responses per second and CPU ms per response. */
export async function loadCost(
  pid: number,
  url: string,
  script: string,
  seconds: number,
): Promise<ProxyCost> {
  await runWrk({ script, url, connections: 32, threads: 2, seconds: 2 });
  const before = await processCpuMs(pid);
  const r = await runWrk({ script, url, connections: 32, threads: 2, seconds });
  return { perSecond: r.requests / seconds, cpuMs: (await processCpuMs(pid) - before) / r.requests };
}

export async function bareProxyCost(
  upstream: string,
  env: Record<string, string>,
  script: string,
  seconds: number,
): Promise<ProxyCost> {
  const port = freePort();
  const kvDir = await Deno.makeTempDir({ prefix: "gw-bare-" });
  const proxy = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-net",
      "--allow-env",
      "--allow-read",
      "--allow-write",
      "--unstable-kv",
      "bench/bare_proxy.ts",
    ],
    env: { UPSTREAM: upstream, PORT: String(port), KV_DIR: kvDir, ...env },
    stdout: "null",
    stderr: "inherit",
  }).spawn();
  try {
    await waitReady(`http://127.0.0.1:${port}/`);
    return await loadCost(proxy.pid, `http://127.0.0.1:${port}/v1/chat/completions`, script, seconds);
  } finally {
    proxy.kill("SIGKILL");
    await proxy.status;
    await Deno.remove(kvDir, { recursive: true });
  }
}
