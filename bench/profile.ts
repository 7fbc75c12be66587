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
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  /** µs from the previous sample (the first: from startTime), one per sample. */
  timeDeltas?: number[];
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

const OWN = "the gateway's own code (src/, main.ts)";

/** Where a function's code comes from, for the self time by origin. */
export function originOf(f: CallFrame, root: string): string {
  const url = f.url.replace(/^file:\/\//, "");
  if (f.functionName === "(program)") return "native, outside JavaScript: (program)";
  if (f.functionName === "(garbage collector)") return "V8 garbage collector";
  if (!url) return f.functionName.startsWith("op_") ? "Deno ops (native calls from JavaScript)" : "other";
  if (url.startsWith("ext:") || url.startsWith("node:")) return "Deno runtime JavaScript (ext:)";
  if (url.includes("/npm/") || url.includes("node_modules") || /^(https?|jsr|npm):/.test(url)) {
    return "dependencies (npm)";
  }
  return url.startsWith(root) ? OWN : "other";
}

/** Samples per node id: all of them, or those `window` holds (ms after the profile's start). */
function hitsOf(profile: CpuProfile, window?: { fromMs: number; toMs: number }): Map<number, number> {
  const hits = new Map<number, number>();
  if (!window) {
    for (const node of profile.nodes) hits.set(node.id, node.hitCount ?? 0);
    return hits;
  }
  const samples = profile.samples ?? [], deltas = profile.timeDeltas ?? [];
  let us = 0;
  for (let i = 0; i < samples.length; i++) {
    us += deltas[i] ?? 0;
    if (us < window.fromMs * 1000 || us > window.toMs * 1000) continue;
    hits.set(samples[i]!, (hits.get(samples[i]!) ?? 0) + 1);
  }
  return hits;
}

/**
 * The `n` functions with the most self time, over the whole profile or over `window`, and the self time of
 * every origin (originOf), as shares of the busy (non-idle) samples.
 */
export function topSelf(
  profile: CpuProfile,
  root: string,
  n = 15,
  window?: { fromMs: number; toMs: number },
): { top: SelfTime[]; busy: number; total: number; origins: SelfTime[] } {
  const counts = new Map<string, number>();
  const byOrigin = new Map<string, number>();
  const hitsById = hitsOf(profile, window);
  let total = 0, idle = 0;
  for (const node of profile.nodes) {
    const hits = hitsById.get(node.id) ?? 0;
    if (hits === 0) continue;
    total += hits;
    if (node.callFrame.functionName === "(idle)") {
      idle += hits;
      continue;
    }
    const key = label(node.callFrame, root);
    counts.set(key, (counts.get(key) ?? 0) + hits);
    const origin = originOf(node.callFrame, root);
    byOrigin.set(origin, (byOrigin.get(origin) ?? 0) + hits);
  }
  const busy = total - idle;
  const ranked = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([name, samples]) => ({ name, samples, share: busy ? samples / busy : 0 }));
  return { top: ranked(counts).slice(0, n), busy, total, origins: ranked(byOrigin) };
}

/**
 * The `n` functions of the gateway's own code with the most total time (self time plus everything they
 * call), over the whole profile or `window`, as shares of the busy samples: a sample counts once for each
 * own function on its stack (recursion counted once). Self time spreads a stage over the runtime calls it
 * makes; total time says what the stage costs as a whole.
 */
export function topInclusive(
  profile: CpuProfile,
  root: string,
  n = 15,
  window?: { fromMs: number; toMs: number },
): SelfTime[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const c of node.children ?? []) parent.set(c, node.id);
  const counts = new Map<string, number>();
  let busy = 0;
  for (const [id, hits] of hitsOf(profile, window)) {
    if (hits === 0 || byId.get(id)?.callFrame.functionName === "(idle)") continue;
    busy += hits;
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const f = byId.get(at)!.callFrame;
      if (originOf(f, root) !== OWN) continue;
      const key = label(f, root);
      if (seen.has(key)) continue;
      seen.add(key);
      counts.set(key, (counts.get(key) ?? 0) + hits);
    }
  }
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, samples]) => ({ name, samples, share: busy ? samples / busy : 0 }));
}

/** Repository root: profile locations are shown relative to it. */
export const PROFILE_ROOT = new URL("..", import.meta.url).pathname;

/** Every .cpuprofile in `dir` (--cpu-prof-dir), by file name. */
export async function readProfiles(dir: string): Promise<{ name: string; profile: CpuProfile }[]> {
  const out: { name: string; profile: CpuProfile }[] = [];
  for await (const e of Deno.readDir(dir)) {
    if (!e.name.endsWith(".cpuprofile")) continue;
    out.push({ name: e.name, profile: JSON.parse(await Deno.readTextFile(`${dir}/${e.name}`)) });
  }
  return out;
}

/** Notes lines for RESULTS.md from every profile in `dir`: its top self time, and with `totals` its top total
 *  time too. */
export async function summariseProfiles(dir: string, totals = false): Promise<string[]> {
  const out: string[] = [];
  for (const { name, profile } of await readProfiles(dir)) {
    const { top, busy, total } = topSelf(profile, PROFILE_ROOT);
    const secs = (profile.endTime - profile.startTime) / 1e6;
    const shares = (ts: SelfTime[]) =>
      ts.map((t) => `\`${t.name}\` ${(t.share * 100).toFixed(1)}%`).join("; ");
    out.push(
      `Gateway CPU profile ${dir}/${name} (${secs.toFixed(1)} s, ${
        ((busy / Math.max(1, total)) * 100).toFixed(0)
      }% ` +
        `of samples busy). Top self time (share of busy samples): ` + shares(top),
    );
    if (totals) {
      out.push(
        `${name}: top total time (share of busy samples): ${shares(topInclusive(profile, PROFILE_ROOT, 25))}`,
      );
    }
  }
  if (out.length === 0) out.push(`BENCH_CPU_PROF=1 but no .cpuprofile was written to ${dir}.`);
  return out;
}

if (import.meta.main) {
  for (const line of await summariseProfiles(Deno.args[0] ?? "bench/prof", true)) console.log(line);
}
