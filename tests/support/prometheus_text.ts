/**
 * A strict reader of the Prometheus text exposition format 0.0.4, for tests: every line must be a HELP, a
 * TYPE or a sample of the grammar; each family is typed once, before its samples (untyped samples are
 * refused: the gateway types every family), and its samples are contiguous; histogram buckets are cumulative and end with +Inf = _count. Throws on the first violation.
 */

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  types: Map<string, string>;
  samples: Sample[];
  /** The value of the one sample with this name and exactly these labels; undefined when absent. */
  get(name: string, labels?: Record<string, string>): number | undefined;
}

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const LABEL = "[a-zA-Z_][a-zA-Z0-9_]*";
const VALUE = "(?:[+-]?(?:\\d+\\.?\\d*(?:[eE][+-]?\\d+)?|\\.\\d+(?:[eE][+-]?\\d+)?)|NaN|[+-]Inf)";
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (${VALUE})(?: (-?\\d+))?$`);
const LABEL_PAIR = new RegExp(`^(${LABEL})="((?:[^"\\\\\\n]|\\\\[\\\\"n])*)"(?:,|$)`);
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"]);

export function parseExposition(text: string): Exposition {
  if (!text.endsWith("\n")) throw new Error("the exposition must end with a newline");
  const types = new Map<string, string>();
  const helps = new Set<string>();
  const samples: Sample[] = [];
  const closed = new Set<string>();
  let current: string | undefined;
  const lines = text.slice(0, -1).split("\n");
  lines.forEach((line, i) => {
    const at = `line ${i + 1}: ${line}`;
    if (line.startsWith("#")) {
      const m = line.match(new RegExp(`^# (HELP|TYPE) (${NAME}) (.*)$`));
      if (!m) {
        if (/^# (HELP|TYPE) /.test(line)) throw new Error(`malformed ${at}`);
        return; // a plain comment
      }
      const [, what, name, rest] = m;
      if (what === "HELP") {
        if (helps.has(name!)) throw new Error(`second HELP, ${at}`);
        if (/\\[^\\n]/.test(rest!.replaceAll("\\\\", ""))) throw new Error(`bad escape in HELP, ${at}`);
        helps.add(name!);
      } else {
        if (!TYPES.has(rest!)) throw new Error(`unknown type, ${at}`);
        if (types.has(name!)) throw new Error(`second TYPE, ${at}`);
        if (samples.some((s) => familyOf(s.name, types) === name)) {
          throw new Error(`TYPE after samples, ${at}`);
        }
        types.set(name!, rest!);
      }
      return;
    }
    if (line === "") throw new Error(`empty ${at}`);
    const m = line.match(SAMPLE);
    if (!m) throw new Error(`malformed sample, ${at}`);
    const [, name, labelText, valueText] = m;
    const labels = parseLabels(labelText ?? "", at);
    const family = familyOf(name!, types);
    if (family !== current) {
      if (current !== undefined) closed.add(current);
      if (closed.has(family)) throw new Error(`samples of ${family} are not contiguous, ${at}`);
      current = family;
    }
    const type = types.get(family);
    if (type === undefined) throw new Error(`sample of an untyped family, ${at}`);
    if (type === "histogram" && name === `${family}_bucket` && labels.le === undefined) {
      throw new Error(`bucket without le, ${at}`);
    }
    samples.push({ name: name!, labels, value: parseValue(valueText!) });
  });
  checkHistograms(types, samples);
  return {
    types,
    samples,
    get(name, labels = {}) {
      const want = JSON.stringify(sorted(labels));
      const hits = samples.filter((s) => s.name === name && JSON.stringify(sorted(s.labels)) === want);
      if (hits.length > 1) throw new Error(`${name} ${want} appears ${hits.length} times`);
      return hits[0]?.value;
    },
  };
}

/** The family a sample belongs to: a histogram's or summary's suffixed series count under their base name. */
function familyOf(name: string, types: Map<string, string>): string {
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    if (!name.endsWith(suffix)) continue;
    const base = name.slice(0, -suffix.length);
    const t = types.get(base);
    if (t === "histogram" || (t === "summary" && suffix !== "_bucket")) return base;
  }
  return name;
}

function parseLabels(text: string, at: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let rest = text;
  while (rest !== "") {
    const m = rest.match(LABEL_PAIR);
    if (!m) throw new Error(`malformed labels, ${at}`);
    if (m[1]! in labels) throw new Error(`label ${m[1]} twice, ${at}`);
    labels[m[1]!] = m[2]!.replace(/\\(.)/g, (_, c) => c === "n" ? "\n" : c);
    rest = rest.slice(m[0].length);
  }
  return labels;
}

function parseValue(text: string): number {
  if (text === "NaN") return NaN;
  if (text === "+Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  return Number(text);
}

function checkHistograms(types: Map<string, string>, samples: Sample[]): void {
  for (const [family, type] of types) {
    if (type !== "histogram") continue;
    const series = new Map<string, Sample[]>();
    for (const s of samples.filter((s) => s.name === `${family}_bucket`)) {
      const { le: _, ...rest } = s.labels;
      const key = JSON.stringify(sorted(rest));
      series.set(key, [...(series.get(key) ?? []), s]);
    }
    for (const [key, buckets] of series) {
      let last = -Infinity;
      let lastCount = 0;
      for (const b of buckets) {
        const le = parseValue(b.labels.le!);
        if (!(le > last)) throw new Error(`${family} ${key}: le not increasing`);
        if (b.value < lastCount) throw new Error(`${family} ${key}: buckets not cumulative`);
        last = le;
        lastCount = b.value;
      }
      if (last !== Infinity) throw new Error(`${family} ${key}: no +Inf bucket`);
      const count = samples.find((s) =>
        s.name === `${family}_count` && JSON.stringify(sorted(s.labels)) === key
      );
      if (count?.value !== lastCount) throw new Error(`${family} ${key}: +Inf bucket != _count`);
      const sum = samples.find((s) => s.name === `${family}_sum` && JSON.stringify(sorted(s.labels)) === key);
      if (sum === undefined) throw new Error(`${family} ${key}: no _sum`);
    }
  }
}

function sorted(labels: Record<string, string>): [string, string][] {
  return Object.entries(labels).sort(([a], [b]) => a < b ? -1 : 1);
}
