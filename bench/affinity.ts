/**
 * Which cores the processes of the one-connection rounds may run on (docs/performance.md "One connection: the
 * proxy on a core of its own"). A deployment's clients and upstream are on other machines; on the bench's
 * machine they are the load generator and the mock, and at one connection the kernel's placement of those two
 * beside the proxy moves a proxy's added latency by more than the bound the target judges. So the proxy under
 * test gets one core and the load and the mock the others, the same for every proxy. `taskset` (util-linux)
 * sets the affinity of every thread of a running process; a process it starts later inherits its parent's.
 */
import { catProc } from "./cpu.ts";

/** The cores a process may use as a list, and that list split: the last core for the proxy, the rest for the load. */
export interface CoreSplit {
  all: string;
  proxy: string;
  load: string;
}

/** The CPU ids of an affinity list as taskset prints it ("0-3,6"). */
export function parseCpuList(list: string): number[] {
  const cpus: number[] = [];
  for (const part of list.trim().split(",")) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) throw new Error(`not a CPU list: ${list}`);
    const from = Number(m[1]), to = Number(m[2] ?? m[1]);
    for (let cpu = from; cpu <= to; cpu++) cpus.push(cpu);
  }
  return cpus;
}

/** `cpus` split for the rounds, or undefined with fewer than two. */
export function splitCores(cpus: readonly number[]): CoreSplit | undefined {
  if (cpus.length < 2) return undefined;
  return { all: cpus.join(","), proxy: String(cpus.at(-1)), load: cpus.slice(0, -1).join(",") };
}

/** This process's cores split for the rounds, or why they cannot be (one core, no taskset). */
export async function coreSplit(): Promise<CoreSplit | string> {
  const out = await taskset(["-c", "-p", String(Deno.pid)]);
  if (out === undefined) return "taskset (util-linux) is not installed";
  const split = splitCores(parseCpuList(out.slice(out.lastIndexOf(":") + 1)));
  return split ?? "one core only";
}

/** Every thread of each of `pids` on `cpus` (a list); checked in /proc, since `taskset -a` does not fail for a
 *  process that is gone. */
export async function setCores(cpus: string, pids: readonly number[]): Promise<void> {
  const want = parseCpuList(cpus).join(",");
  for (const pid of pids) {
    await taskset(["-a", "-c", "-p", cpus, String(pid)]);
    const list = /Cpus_allowed_list:\s*(\S+)/.exec(await catProc([`/proc/${pid}/status`]))?.[1];
    if (list === undefined || parseCpuList(list).join(",") !== want) {
      throw new Error(`taskset could not move pid ${pid} to CPUs ${cpus}`);
    }
  }
}

async function taskset(args: string[]): Promise<string | undefined> {
  const out = await new Deno.Command("taskset", { args, stdout: "piped", stderr: "null" }).output()
    .catch(() => undefined);
  return out?.success ? new TextDecoder().decode(out.stdout) : undefined;
}
