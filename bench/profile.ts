/** Summarises V8 .cpuprofile files (gateway run with --cpu-prof): top functions by self time. */

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
}

export interface SelfTime {
  name: string;
  samples: number;
  /** Share of non-idle samples, 0..1. */
  share: number;
}

function label(f: CallFrame, root: string): string {
  const name = f.functionName || "(anonymous)";
  if (!f.url) return name;
  const where = f.url.replace(/^file:\/\//, "").replace(root, "");
  return `${name} ${where}:${f.lineNumber + 1}`;
}

export function topSelf(
  profile: CpuProfile,
  root: string,
  n = 15,
): { top: SelfTime[]; busy: number; total: number } {
  const counts = new Map<string, number>();
  let total = 0, idle = 0;
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (hits === 0) continue;
    total += hits;
    if (node.callFrame.functionName === "(idle)") {
      idle += hits;
      continue;
    }
    const key = label(node.callFrame, root);
    counts.set(key, (counts.get(key) ?? 0) + hits);
  }
  const busy = total - idle;
  const top = [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, samples]) => ({ name, samples, share: busy ? samples / busy : 0 }));
  return { top, busy, total };
}

/** Notes lines for RESULTS.md from every profile in `dir`. */
export async function summariseProfiles(dir: string): Promise<string[]> {
  const root = new URL("..", import.meta.url).pathname;
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    if (!e.name.endsWith(".cpuprofile")) continue;
    const profile = JSON.parse(await Deno.readTextFile(`${dir}/${e.name}`)) as CpuProfile;
    const { top, busy, total } = topSelf(profile, root);
    const secs = (profile.endTime - profile.startTime) / 1e6;
    out.push(
      `Gateway CPU profile ${dir}/${e.name} (${secs.toFixed(1)} s, ${
        ((busy / Math.max(1, total)) * 100).toFixed(0)
      }% ` +
        `of samples busy). Top self time (share of busy samples): ` +
        top.map((t) => `\`${t.name}\` ${(t.share * 100).toFixed(1)}%`).join("; "),
    );
  }
  if (out.length === 0) out.push(`BENCH_CPU_PROF=1 but no .cpuprofile was written to ${dir}.`);
  return out;
}

if (import.meta.main) {
  for (const line of await summariseProfiles(Deno.args[0] ?? "bench/prof")) console.log(line);
}
