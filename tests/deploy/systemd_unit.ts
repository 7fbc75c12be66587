/**
 * Just enough of systemd's file formats for tests/deploy/systemd_test.ts: a unit file's `Key=value` lines by
 * section (comments, blank lines and backslash continuations as systemd reads them), an EnvironmentFile's
 * variables, and an ExecStart= command line split into its words.
 */

/** The values of each key, by section: `unit.get("Service")?.get("Environment")` lists every such line. */
export type UnitFile = Map<string, Map<string, string[]>>;

export function parseUnit(text: string): UnitFile {
  const unit: UnitFile = new Map();
  let section: Map<string, string[]> | undefined;
  const lines = text.replace(/\\\n/g, " ").split("\n");
  for (const raw of lines) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = new Map();
      unit.set(header[1]!, section);
      continue;
    }
    const eq = line.indexOf("=");
    if (!section || eq < 0) throw new Error(`not a unit file line: ${raw}`);
    const key = line.slice(0, eq).trim();
    section.set(key, [...section.get(key) ?? [], line.slice(eq + 1).trim()]);
  }
  return unit;
}

/** The one value of `key` in `section` (the last line, as systemd takes it), or an error naming it. */
export function unitValue(unit: UnitFile, section: string, key: string): string {
  const values = unit.get(section)?.get(key);
  if (!values?.length) throw new Error(`[${section}] ${key}= is missing`);
  return values[values.length - 1]!;
}

/** `KEY=value` lines (systemd's EnvironmentFile=): comments and blank lines skipped, quotes removed. */
export function parseEnvFile(text: string): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!m) throw new Error(`not an environment line: ${raw}`);
    vars[m[1]!] = unquote(m[2]!.trim());
  }
  return vars;
}

/** Environment= values: each holds one or more `KEY=value` words. */
export function environmentLines(values: string[]): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const word of values.flatMap(splitWords)) {
    const eq = word.indexOf("=");
    if (eq < 1) throw new Error(`not an assignment: ${word}`);
    vars[word.slice(0, eq)] = word.slice(eq + 1);
  }
  return vars;
}

/** An ExecStart= line's words, its prefixes (-, @, +, !, :) dropped from the program. */
export function execWords(value: string): string[] {
  const [program, ...args] = splitWords(value);
  if (!program) throw new Error("ExecStart= is empty");
  return [program.replace(/^[-@+!:]+/, ""), ...args];
}

/** `TimeoutStopSec=45s` (or 45, 1min 30s) in ms. */
export function timespanMs(value: string): number {
  const units: Record<string, number> = { "": 1000, s: 1000, sec: 1000, ms: 1, min: 60_000, m: 60_000 };
  let total = 0;
  for (const part of value.trim().split(/\s+/)) {
    const m = /^(\d+)([a-z]*)$/.exec(part);
    const unit = m ? units[m[2]!] : undefined;
    if (!m || unit === undefined) throw new Error(`not a time span: ${value}`);
    total += Number(m[1]) * unit;
  }
  return total;
}

function splitWords(value: string): string[] {
  return [...value.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

function unquote(value: string): string {
  const m = /^"(.*)"$|^'(.*)'$/.exec(value);
  return m ? (m[1] ?? m[2]!) : value;
}
