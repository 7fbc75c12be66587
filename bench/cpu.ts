/**
 * CPU accounting from /proc (Linux): who used the cores during a scenario — the load generator,
 * the gateway, the simulator, and everything else on the machine (other jobs skew the figures).
 * /proc is read through `cat` because Deno requires --allow-all for /proc/<pid> reads.
 */

const CLK_TCK = 100;

interface Snapshot {
  at: number;
  /** Non-idle jiffies of the whole machine. */
  busy: number;
  /** irq + softirq jiffies (kernel network processing on loopback lands here, not on a pid). */
  irq: number;
  /** utime+stime jiffies per pid. */
  pids: Map<number, number>;
}

/** Text of /proc files, concatenated (one `cat`). */
export async function catProc(paths: string[]): Promise<string> {
  const out = await new Deno.Command("cat", { args: paths, stdout: "piped", stderr: "null" }).output();
  return new TextDecoder().decode(out.stdout);
}

async function snapshot(pids: number[]): Promise<Snapshot> {
  const text = await catProc(["/proc/stat", ...pids.map((p) => `/proc/${p}/stat`)]);
  const at = performance.now();
  let busy = 0, irq = 0;
  const map = new Map<number, number>();
  for (const line of text.split("\n")) {
    if (line.startsWith("cpu ")) {
      const f = line.trim().split(/\s+/).slice(1).map(Number);
      const total = f.slice(0, 8).reduce((a, b) => a + b, 0); // user..steal
      busy = total - (f[3] ?? 0) - (f[4] ?? 0); // minus idle, iowait
      irq = (f[5] ?? 0) + (f[6] ?? 0);
    } else if (/^\d+ \(/.test(line)) {
      const pid = Number(line.slice(0, line.indexOf(" ")));
      const f = line.slice(line.lastIndexOf(") ") + 2).split(" ");
      map.set(pid, Number(f[11]) + Number(f[12])); // utime, stime (fields 14, 15)
    }
  }
  return { at, busy, irq, pids: map };
}

export interface CpuUse {
  /** Cores used (1.0 = one core fully busy) per named process. */
  byName: Record<string, number>;
  /** Cores spent in irq/softirq (loopback TCP), not attributed to a process. */
  irq: number;
  /** Cores used by all other processes on the machine. */
  other: number;
}

/** Runs `fn` and reports the average cores each named process or group of processes (and the rest) used
 *  meanwhile. */
export async function withCpu<T>(
  named: Record<string, number | number[]>,
  fn: () => Promise<T>,
): Promise<[T, CpuUse]> {
  const pids = Object.values(named).flat();
  const a = await snapshot(pids);
  const value = await fn();
  const b = await snapshot(pids);
  const secs = (b.at - a.at) / 1000;
  const cores = (j: number) => j / CLK_TCK / secs;
  const byName: Record<string, number> = {};
  let ours = 0;
  for (const [name, group] of Object.entries(named)) {
    const d = [group].flat().reduce((sum, pid) => sum + (b.pids.get(pid) ?? 0) - (a.pids.get(pid) ?? 0), 0);
    ours += d;
    byName[name] = cores(d);
  }
  const irq = b.irq - a.irq;
  return [value, { byName, irq: cores(irq), other: Math.max(0, cores(b.busy - a.busy - ours - irq)) }];
}

/**
 * utime + stime jiffies of the threads of `pid`, summed by thread name (/proc/<pid>/task/<tid>/stat); the
 * main thread (tid = pid) is "main". A thread that ends between two reads drops out of the second.
 */
export async function threadJiffies(pid: number): Promise<Map<string, number>> {
  const out = await new Deno.Command("sh", {
    args: ["-c", `cat /proc/${pid}/task/*/stat`],
    stdout: "piped",
    stderr: "null",
  }).output();
  const byName = new Map<string, number>();
  for (const line of new TextDecoder().decode(out.stdout).split("\n")) {
    if (!line) continue;
    const tid = Number(line.slice(0, line.indexOf(" ")));
    const name = tid === pid ? "main" : line.slice(line.indexOf("(") + 1, line.lastIndexOf(")"));
    const f = line.slice(line.lastIndexOf(") ") + 2).split(" ");
    byName.set(name, (byName.get(name) ?? 0) + Number(f[11]) + Number(f[12]));
  }
  return byName;
}

/** Cores each thread name used between two threadJiffies reads `seconds` apart, busiest first. */
export function threadCores(
  a: Map<string, number>,
  b: Map<string, number>,
  seconds: number,
): { name: string; cores: number }[] {
  return [...b]
    .map(([name, j]) => ({ name, cores: (j - (a.get(name) ?? 0)) / CLK_TCK / seconds }))
    .sort((x, y) => y.cores - x.cores);
}

/** The processes whose parent is `pid` (from every /proc/<pid>/stat). */
export async function childrenOf(pid: number): Promise<number[]> {
  const out = await new Deno.Command("sh", {
    args: ["-c", "cat /proc/[0-9]*/stat"],
    stdout: "piped",
    stderr: "null",
  })
    .output();
  const children: number[] = [];
  for (const line of new TextDecoder().decode(out.stdout).split("\n")) {
    const f = line.slice(line.lastIndexOf(") ") + 2).split(" ");
    if (Number(f[1]) === pid) children.push(Number(line.slice(0, line.indexOf(" "))));
  }
  return children;
}

export function formatCpu(u: CpuUse): string {
  const parts = Object.entries(u.byName).map(([n, c]) => `${n} ${c.toFixed(2)}`);
  return `CPU cores: ${parts.join(", ")}, irq ${u.irq.toFixed(2)}, other processes ${u.other.toFixed(2)}`;
}
