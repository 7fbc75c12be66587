/**
 * A server process under wrk at 32 connections, 2 s warm-up then `seconds`: its rate and its CPU per response
 * (/proc). bench/ab.ts measures each variant (a gateway, or the bare proxy) with it.
 */
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
