/** Markdown rendering of the benchmark results. */
import { catProc, type CpuUse } from "./cpu.ts";
import { CPU_HEADING, NOTES_HEADING } from "./sections.ts";

export interface Row {
  metric: string;
  direct?: string;
  /** The bare Deno proxy (bench/bare_proxy.ts): the runtime's own floor. */
  bare?: string;
  gateway?: string;
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
  const head =
    "| Metric | Direct to simulator | Bare Deno proxy | Through gateway | Gateway / direct | Target | Result |";
  const sep = "|---|---:|---:|---:|---:|---|:---:|";
  const lines = rows.map((r) => {
    const result = r.pass === undefined ? "—" : r.pass ? "PASS" : "**FAIL**";
    return `| ${r.metric} | ${r.direct ?? ""} | ${r.bare ?? ""} | ${r.gateway ?? ""} | ${r.ratio ?? ""} | ${
      r.target ?? ""
    } | ${result} |`;
  });
  return [head, sep, ...lines].join("\n");
}

/** A Markdown table of `head` and `rows` (cells as given; numeric columns right-aligned by `right`). */
export function grid(head: string[], rows: string[][], right: boolean[] = []): string {
  const sep = head.map((_, i) => right[i] ? "---:" : "---");
  return [head, sep, ...rows].map((cells) => `| ${cells.join(" | ")} |`).join("\n");
}

export interface Machine {
  date: string;
  nproc: number;
  cpu: string;
  deno: string;
  command: string;
  seconds: number;
  warmup: number;
  loadavg: string;
}

/** How the bench was started, as RESULTS.md records it. */
export const commandLine = (seconds: number, base = "deno task bench") =>
  base + (Deno.env.get("BENCH_SECONDS") ? ` (BENCH_SECONDS=${seconds})` : "");

export async function machine(seconds: number, warmup: number, loadavg: string): Promise<Machine> {
  let cpu = "unknown";
  try {
    const info = await catProc(["/proc/cpuinfo"]);
    cpu = /^model name\s*:\s*(.+)$/m.exec(info)?.[1]?.trim() ?? cpu;
  } catch { /* not Linux */ }
  return {
    date: new Date().toISOString(),
    nproc: navigator.hardwareConcurrency,
    cpu,
    deno: `deno ${Deno.version.deno} (v8 ${Deno.version.v8}, typescript ${Deno.version.typescript})`,
    command: commandLine(seconds),
    seconds,
    warmup,
    loadavg,
  };
}

/** Average cores used per process during each measured run (warm-up included). */
export function cpuTable(runs: { label: string; use: CpuUse }[]): string {
  const c = (x: number | undefined) => x === undefined ? "—" : x.toFixed(2);
  const lines = runs.map(({ label, use }) =>
    `| ${label} | ${c(use.byName.client)} | ${c(use.byName.bare)} | ${c(use.byName.gateway)} | ` +
    `${c(use.byName.sim)} | ${c(use.irq)} | ${c(use.other)} |`
  );
  return [
    "| Run | Load generator | Bare proxy | Gateway | Simulator | Kernel irq/softirq | Other processes |",
    "|---|---:|---:|---:|---:|---:|---:|",
    ...lines,
  ].join("\n");
}

export function document(m: Machine, rows: Row[], notes: string[], cpu: string): string {
  return [
    "# Gateway benchmark results",
    "",
    `- Date: ${m.date}`,
    `- Machine: ${m.nproc} CPUs (${m.cpu}); load generator, simulator and gateway share them`,
    `- Runtime: ${m.deno}`,
    `- Load average (1/5/15 min) at start → end: ${m.loadavg}`,
    `- Command: \`${m.command}\` (from the repository root)`,
    `- Load (the stream rows): a Deno fetch client on one keep-alive connection, ${m.warmup} s warm-up + ` +
    `${m.seconds} s measured per scenario; gateway, bare Deno proxy and simulator each in their own subprocess, ` +
    "loopback only; billing on (every request reserves and settles). Throughput and JSON latency: the " +
    "side-by-side section (wrk).",
    "",
    table(rows),
    "",
    `## ${CPU_HEADING}`,
    "",
    cpu,
    "",
    `## ${NOTES_HEADING}`,
    "",
    ...notes.map((n) => `- ${n}`),
    "",
  ].join("\n");
}
