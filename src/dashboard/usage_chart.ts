/**
 * The usage view's data and charts, pure: the key's hourly sums (Store.usageHours) put into 30
 * daily buckets (oldest first, ending with today UTC; a day is the sum of its hours) or 48 hourly ones (ending
 * with the current UTC hour), split into series by family/model, and drawn as server-rendered SVG stacked bars
 * — no chart library, no script. Each bucket is a `<g data-testid="chart-point">` with its totals in data
 * attributes and one `<rect data-series>` per series with a non-zero value there.
 */
import type { UsageHour } from "../store/types.ts";
import { DAY, HOUR } from "../store/shared_window.ts";
import { formatUsd } from "../money/usd.ts";
import { type Html, html } from "../util/html.ts";

export type Range = "days" | "hours";
export type Metric = "charged" | "tokens";

export interface Sums {
  requests: number;
  /** pico-USD */
  charged: bigint;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
}

export interface Bucket {
  /** "YYYY-MM-DD" (days) or "YYYY-MM-DDTHH" (hours), UTC. */
  label: string;
  start: number;
  /** By series ("family/model"). */
  series: Map<string, Sums>;
  total: Sums;
}

export interface UsageBuckets {
  range: Range;
  /** The hours read: [fromMs, toMs). */
  fromMs: number;
  toMs: number;
  buckets: Bucket[];
  /** Every series with a request in the range, sorted; its sums over the range. */
  totals: Map<string, Sums>;
  total: Sums;
}

const SHAPE: Record<Range, { step: number; count: number; labelChars: number }> = {
  days: { step: DAY, count: 30, labelChars: 10 },
  hours: { step: HOUR, count: 48, labelChars: 13 },
};

/** The hours a range reads at `now`: [first bucket's start, the end of the current day or hour). */
export function rangeBounds(range: Range, now: number): { fromMs: number; toMs: number } {
  const { step, count } = SHAPE[range];
  const current = now - (now % step);
  return { fromMs: current - (count - 1) * step, toMs: current + step };
}

const zero = (): Sums => ({
  requests: 0,
  charged: 0n,
  inputTokens: 0,
  cachedInputTokens: 0,
  outputTokens: 0,
});

function add(to: Sums, h: Sums): void {
  to.requests += h.requests;
  to.charged += h.charged;
  to.inputTokens += h.inputTokens;
  to.cachedInputTokens += h.cachedInputTokens;
  to.outputTokens += h.outputTokens;
}

/** Tokens a bucket counts: input (cached included) and output. */
export const tokensOf = (s: Sums): number => s.inputTokens + s.outputTokens;

/** `hours` (read for `rangeBounds(range, now)`) in the range's buckets. */
export function bucketize(range: Range, hours: readonly UsageHour[], now: number): UsageBuckets {
  const { step, count, labelChars } = SHAPE[range];
  const { fromMs, toMs } = rangeBounds(range, now);
  const buckets: Bucket[] = Array.from({ length: count }, (_, i) => {
    const start = fromMs + i * step;
    return {
      label: new Date(start).toISOString().slice(0, labelChars),
      start,
      series: new Map(),
      total: zero(),
    };
  });
  const totals = new Map<string, Sums>();
  const total = zero();
  for (const h of hours) {
    if (h.hour < fromMs || h.hour >= toMs) continue;
    const b = buckets[Math.floor((h.hour - fromMs) / step)]!;
    const name = `${h.family}/${h.model}`;
    let s = b.series.get(name);
    if (!s) b.series.set(name, s = zero());
    add(s, h);
    add(b.total, h);
    let t = totals.get(name);
    if (!t) totals.set(name, t = zero());
    add(t, h);
    add(total, h);
  }
  const sorted = new Map([...totals].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0));
  return { range, fromMs, toMs, buckets, totals: sorted, total };
}

/** Series colours, by the series' place in the sorted list (presentation attributes: the CSP allows no style). */
const PALETTE = [
  "#2f6fdb",
  "#e0782f",
  "#2a9d6a",
  "#c23b4e",
  "#7b52c7",
  "#8c6d2c",
  "#d35fb7",
  "#4f8f9f",
  "#9aa132",
  "#5d6775",
];

const W = 760;
const H = 260;
const LEFT = 72;
const RIGHT = 8;
const TOP = 12;
const BOTTOM = 36;
const PLOT_W = W - LEFT - RIGHT;
const PLOT_H = H - TOP - BOTTOM;

const value = (s: Sums, m: Metric): number => m === "charged" ? Number(s.charged) : tokensOf(s);
const round = (n: number): string => String(Math.round(n * 100) / 100);
const tokenCount = new Intl.NumberFormat("ru-RU", { maximumSignificantDigits: 3 });

/** An axis label: USD with a decimal point, as the page's amounts are written; tokens grouped the Russian way. */
function axisLabel(v: number, m: Metric): string {
  return m === "charged" ? `$${Number((v / 1e12).toPrecision(3))}` : tokenCount.format(v);
}

function bucketTitle(b: Bucket, range: Range): string {
  const when = range === "days" ? b.label : `${b.label.slice(0, 10)} ${b.label.slice(11)}:00 UTC`;
  return `${when}: $${formatUsd(b.total.charged)}, токенов ${
    tokensOf(b.total)
  }, запросов ${b.total.requests}`;
}

/**
 * The stacked bar chart of `metric`: `data-testid` names the chart ("usage-chart": spend, the contract's; the
 * tokens chart has its own, so the two are never counted together) and its points.
 */
export function chartSvg(u: UsageBuckets, metric: Metric, ids: { chart: string; point: string }): Html {
  const names = [...u.totals.keys()];
  const colour = new Map(names.map((n, i) => [n, PALETTE[i % PALETTE.length]!]));
  const max = Math.max(0, ...u.buckets.map((b) => value(b.total, metric)));
  const slot = PLOT_W / u.buckets.length;
  const barW = slot * 0.72;
  const y = (v: number) => TOP + PLOT_H - (max === 0 ? 0 : v / max * PLOT_H);
  const every = u.range === "days" ? 5 : 6;
  const grid = [0, 0.5, 1].map((f) =>
    html`
      <line class="grid" x1="${LEFT}" x2="${W - RIGHT}" y1="${round(y(max * f))}" y2="${round(
        y(max * f),
      )}" stroke="#d9dde3" />
      <text class="axis" x="${LEFT - 6}" y="${round(y(max * f) + 4)}" text-anchor="end" font-size="11"
        fill="#5d6775">${axisLabel(max * f, metric)}</text>
    `
  );
  const points = u.buckets.map((b, i) => {
    const x = LEFT + i * slot + (slot - barW) / 2;
    let base = 0;
    const rects = names.flatMap((name) => {
      const s = b.series.get(name);
      const v = s ? value(s, metric) : 0;
      if (v === 0) return [];
      const top = y(base + v);
      const r = html`
        <rect data-series="${name}" x="${round(x)}" y="${round(top)}" width="${round(barW)}" height="${round(
          y(base) - top,
        )}"
          fill="${colour.get(name)!}" />
      `;
      base += v;
      return [r];
    });
    const tick = i % every === 0
      ? html`
        <text class="axis" x="${round(x + barW / 2)}" y="${H - BOTTOM +
          16}" text-anchor="middle" font-size="11"
          fill="#5d6775">${u.range === "days"
            ? `${b.label.slice(8, 10)}.${b.label.slice(5, 7)}`
            : `${b.label.slice(11)}:00`}</text>
      `
      : "";
    return html`
      <g data-testid="${ids.point}" data-bucket="${b.label}" data-charged-usd="${formatUsd(b.total.charged)}"
        data-tokens="${tokensOf(b.total)}"><title>${bucketTitle(b, u.range)}</title>${rects}</g>${tick}
    `;
  });
  const label = metric === "charged" ? "Расходы, USD" : "Токены (вход и выход)";
  return html`
    <svg data-testid="${ids.chart}" data-range="${u.range}" viewBox="0 0 ${W} ${H}" role="img"
      aria-label="${label}" class="chart" xmlns="http://www.w3.org/2000/svg">
    ${grid}
    ${points}
    ${max === 0 &&
      html`
        <text x="${LEFT + PLOT_W / 2}" y="${TOP + PLOT_H / 2}" text-anchor="middle" font-size="14"
          fill="#5d6775">Нет данных за период</text>
      `}
    </svg>
    <ul class="legend">${names.map((n) =>
      html`<li><svg class="swatch" width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill="${colour
        .get(n)!}"/></svg>${n}</li>`
    )}</ul>
  `;
}
