/**
 * A small Prometheus registry rendering the text exposition format 0.0.4: counters, gauges and histograms
 * with fixed label names and fixed buckets, plus values read at scrape time (`collect`). Written here rather
 * than taken from prom-client, which loads cluster, http, https, zlib and perf_hooks at import and hashes a
 * label object into a string on every increment: here a labelled cell is found by one Map lookup per label
 * value and nothing is allocated once it exists (docs/operator-guide.md "Operating").
 */

type Kind = "counter" | "gauge" | "histogram" | "summary";

/** One metric: its header and how its samples render. */
interface Metric {
  readonly name: string;
  readonly help: string;
  readonly kind: Kind;
  render(out: string[]): void;
}

export class CounterCell {
  value = 0;
  inc(n = 1): void {
    this.value += n;
  }
}

export class GaugeCell {
  value = 0;
  set(v: number): void {
    this.value = v;
  }
  inc(n = 1): void {
    this.value += n;
  }
  dec(n = 1): void {
    this.value -= n;
  }
}

export class HistogramCell {
  /** Per bucket (not cumulative; the last one is +Inf). */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }
  observe(v: number): void {
    const b = this.bounds;
    let i = 0;
    while (i < b.length && v > b[i]!) i++;
    this.counts[i]!++;
    this.sum += v;
    this.count++;
  }
}

/** Cells by label values: nested maps, one level per label, so a lookup builds no string. */
abstract class Labelled<C> implements Metric {
  abstract readonly kind: Kind;
  readonly #root = new Map<string, unknown>();
  readonly #cells: { values: readonly string[]; cell: C }[] = [];
  #single: C | undefined;

  constructor(readonly name: string, readonly help: string, readonly labelNames: readonly string[]) {
    checkName(name);
    labelNames.forEach(checkName);
  }

  protected abstract make(): C;

  /** The cell of these label values (as many as the label names), created on first use. */
  labels(...values: string[]): C {
    const n = this.labelNames.length;
    if (values.length !== n) throw new Error(`${this.name}: ${n} label values expected`);
    if (n === 0) return this.#single ??= this.#add([]);
    let map = this.#root;
    for (let i = 0; i < n - 1; i++) {
      let next = map.get(values[i]!) as Map<string, unknown> | undefined;
      if (!next) map.set(values[i]!, next = new Map());
      map = next;
    }
    const last = values[n - 1]!;
    let cell = map.get(last) as C | undefined;
    if (!cell) map.set(last, cell = this.#add(values));
    return cell;
  }

  #add(values: readonly string[]): C {
    const cell = this.make();
    this.#cells.push({ values: [...values], cell });
    return cell;
  }

  render(out: string[]): void {
    for (const { values, cell } of this.#cells) {
      this.renderCell(out, labelText(this.labelNames, values), cell);
    }
  }

  protected abstract renderCell(out: string[], labels: string, cell: C): void;
}

export class Counter extends Labelled<CounterCell> {
  readonly kind = "counter";
  protected make(): CounterCell {
    return new CounterCell();
  }
  protected renderCell(out: string[], labels: string, cell: CounterCell): void {
    out.push(`${this.name}${braces(labels)} ${num(cell.value)}`);
  }
}

export class Gauge extends Labelled<GaugeCell> {
  readonly kind = "gauge";
  protected make(): GaugeCell {
    return new GaugeCell();
  }
  protected renderCell(out: string[], labels: string, cell: GaugeCell): void {
    out.push(`${this.name}${braces(labels)} ${num(cell.value)}`);
  }
}

export class Histogram extends Labelled<HistogramCell> {
  readonly kind = "histogram";
  readonly bounds: readonly number[];

  constructor(name: string, help: string, labelNames: readonly string[], bounds: readonly number[]) {
    super(name, help, labelNames);
    if (labelNames.includes("le")) throw new Error(`${name}: "le" is reserved`);
    if (bounds.length === 0 || bounds.some((b, i) => !Number.isFinite(b) || (i > 0 && b <= bounds[i - 1]!))) {
      throw new Error(`${name}: buckets must be finite and increasing`);
    }
    this.bounds = [...bounds];
  }

  protected make(): HistogramCell {
    return new HistogramCell(this.bounds);
  }

  protected renderCell(out: string[], labels: string, cell: HistogramCell): void {
    const sep = labels ? `${labels},` : "";
    let cumulative = 0;
    this.bounds.forEach((b, i) => {
      cumulative += cell.counts[i]!;
      out.push(`${this.name}_bucket{${sep}le="${num(b)}"} ${num(cumulative)}`);
    });
    out.push(`${this.name}_bucket{${sep}le="+Inf"} ${num(cell.count)}`);
    out.push(`${this.name}_sum${braces(labels)} ${num(cell.sum)}`);
    out.push(`${this.name}_count${braces(labels)} ${num(cell.count)}`);
  }
}

/** A value read when scraped: a number (counter or gauge), or a sum and count (a summary without quantiles). */
export type Collected =
  | { kind: "counter" | "gauge"; read(): number }
  | { kind: "summary"; read(): { sum: number; count: number } };

class CollectedMetric implements Metric {
  readonly kind: Kind;
  constructor(readonly name: string, readonly help: string, private readonly source: Collected) {
    checkName(name);
    this.kind = source.kind;
  }
  render(out: string[]): void {
    if (this.source.kind === "summary") {
      const { sum, count } = this.source.read();
      out.push(`${this.name}_sum ${num(sum)}`, `${this.name}_count ${num(count)}`);
    } else out.push(`${this.name} ${num(this.source.read())}`);
  }
}

export class Registry {
  readonly #metrics: Metric[] = [];

  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.#add(new Counter(name, help, labelNames));
  }

  gauge(name: string, help: string, labelNames: readonly string[] = []): Gauge {
    return this.#add(new Gauge(name, help, labelNames));
  }

  histogram(name: string, help: string, labelNames: readonly string[], bounds: readonly number[]): Histogram {
    return this.#add(new Histogram(name, help, labelNames, bounds));
  }

  collect(name: string, help: string, source: Collected): void {
    this.#add(new CollectedMetric(name, help, source));
  }

  /** The exposition text (`Content-Type: text/plain; version=0.0.4`). */
  render(): string {
    const out: string[] = [];
    for (const m of this.#metrics) {
      out.push(`# HELP ${m.name} ${m.help.replaceAll("\\", "\\\\").replaceAll("\n", "\\n")}`);
      out.push(`# TYPE ${m.name} ${m.kind}`);
      m.render(out);
    }
    return out.join("\n") + "\n";
  }

  #add<M extends Metric>(m: M): M {
    if (this.#metrics.some((o) => o.name === m.name)) throw new Error(`metric ${m.name} registered twice`);
    this.#metrics.push(m);
    return m;
  }
}

export const EXPOSITION_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

function checkName(name: string): void {
  if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(name)) throw new Error(`invalid metric or label name: ${name}`);
}

function labelText(names: readonly string[], values: readonly string[]): string {
  return names.map((n, i) => `${n}="${escapeValue(values[i]!)}"`).join(",");
}

function braces(labels: string): string {
  return labels ? `{${labels}}` : "";
}

function escapeValue(v: string): string {
  return v.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n");
}

function num(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "+Inf";
  if (v === -Infinity) return "-Inf";
  return String(v);
}
