/** Markdown rendering of the benchmark results. */

export interface Row {
  metric: string;
  direct?: string;
  gateway: string;
  ratio?: string;
  target?: string;
  /** undefined: informational, no target. */
  pass?: boolean;
}

export const ms = (x: number) => Number.isFinite(x) ? `${x.toFixed(3)} ms` : "n/a";
export const num = (x: number, digits = 0) =>
  Number.isFinite(x) ? x.toLocaleString("en-US", { maximumFractionDigits: digits }) : "n/a";
export const ratio = (gw: number, direct: number) =>
  Number.isFinite(gw / direct) ? `${(gw / direct).toFixed(2)}×` : "n/a";

export function table(rows: Row[]): string {
  const head = "| Metric | Direct to simulator | Through gateway | Gateway / direct | Target | Result |";
  const sep = "|---|---:|---:|---:|---|:---:|";
  const lines = rows.map((r) => {
    const result = r.pass === undefined ? "—" : r.pass ? "PASS" : "**FAIL**";
    return `| ${r.metric} | ${r.direct ?? ""} | ${r.gateway} | ${r.ratio ?? ""} | ${
      r.target ?? ""
    } | ${result} |`;
  });
  return [head, sep, ...lines].join("\n");
}

export interface Machine {
  date: string;
  nproc: number;
  cpu: string;
  deno: string;
  command: string;
  seconds: number;
  warmup: number;
}

export async function machine(seconds: number, warmup: number): Promise<Machine> {
  let cpu = "unknown";
  try {
    const info = await Deno.readTextFile("/proc/cpuinfo");
    cpu = /^model name\s*:\s*(.+)$/m.exec(info)?.[1]?.trim() ?? cpu;
  } catch { /* not Linux */ }
  return {
    date: new Date().toISOString(),
    nproc: navigator.hardwareConcurrency,
    cpu,
    deno: `deno ${Deno.version.deno} (v8 ${Deno.version.v8}, typescript ${Deno.version.typescript})`,
    command: "deno task bench" + (Deno.env.get("BENCH_SECONDS") ? ` (BENCH_SECONDS=${seconds})` : ""),
    seconds,
    warmup,
  };
}

export function document(m: Machine, rows: Row[], notes: string[]): string {
  return [
    "# Gateway benchmark results",
    "",
    `- Date: ${m.date}`,
    `- Machine: ${m.nproc} CPUs (${m.cpu}); load generator, simulator and gateway share them`,
    `- Runtime: ${m.deno}`,
    `- Command: \`${m.command}\` (from the repository root)`,
    `- Load: closed-loop fetch (keep-alive) loops, ${m.warmup} s warm-up + ${m.seconds} s measured per scenario;` +
    " gateway and simulator each in their own subprocess, loopback only; billing on (every request reserves and settles).",
    "",
    table(rows),
    "",
    "## Notes",
    "",
    ...notes.map((n) => `- ${n}`),
    "",
  ].join("\n");
}
