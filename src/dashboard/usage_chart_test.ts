import assert from "node:assert/strict";
import type { UsageHour } from "../store/types.ts";
import { bucketize, chartSvg, rangeBounds } from "./usage_chart.ts";

const HOUR = 3_600_000;
/** 2026-01-31 10:30 UTC. */
const NOW = Date.UTC(2026, 0, 31, 10, 30);

const hour = (
  at: number,
  family: UsageHour["family"],
  model: string,
  charged: bigint,
  tokens = 10,
): UsageHour => ({
  hour: at - (at % HOUR),
  family,
  model,
  requests: 1,
  charged,
  inputTokens: tokens,
  cachedInputTokens: 1,
  outputTokens: tokens,
});

Deno.test("rangeBounds: 30 UTC days ending today, 48 UTC hours ending with the current one", () => {
  assert.deepEqual(rangeBounds("days", NOW), { fromMs: Date.UTC(2026, 0, 2), toMs: Date.UTC(2026, 1, 1) });
  assert.deepEqual(rangeBounds("hours", NOW), {
    fromMs: Date.UTC(2026, 0, 29, 11),
    toMs: Date.UTC(2026, 0, 31, 11),
  });
  assert.deepEqual(
    rangeBounds("days", Date.UTC(2026, 0, 31)),
    rangeBounds("days", Date.UTC(2026, 0, 31, 23, 59)),
  );
});

Deno.test("bucketize: a day is the sum of its hours, per family/model; the oldest bucket first; hours outside dropped", () => {
  const hours = [
    hour(Date.UTC(2026, 0, 2, 0, 10), "alpha", "k3", 5n), // the first day's first hour
    hour(Date.UTC(2026, 0, 31, 1), "alpha", "k3", 7n),
    hour(Date.UTC(2026, 0, 31, 9), "alpha", "k3", 11n),
    hour(Date.UTC(2026, 0, 31, 9), "theta", "theta3.7-plus", 13n),
    hour(Date.UTC(2026, 0, 1, 23), "beta", "beta-opus-5", 100n), // before the range
  ];
  const d = bucketize("days", hours, NOW);
  assert.equal(d.buckets.length, 30);
  assert.equal(d.buckets[0]!.label, "2026-01-02");
  assert.equal(d.buckets.at(-1)!.label, "2026-01-31");
  assert.equal(d.buckets[0]!.total.charged, 5n);
  const today = d.buckets.at(-1)!;
  assert.deepEqual(today.series.get("alpha/k3"), {
    requests: 2,
    charged: 18n,
    inputTokens: 20,
    cachedInputTokens: 2,
    outputTokens: 20,
  });
  assert.equal(today.series.get("theta/theta3.7-plus")!.charged, 13n);
  assert.equal(today.total.charged, 31n);
  assert.deepEqual(
    [...d.totals.keys()],
    ["alpha/k3", "theta/theta3.7-plus"],
    "sorted; the dropped beta absent",
  );
  assert.equal(d.total.charged, 36n);
  assert.equal(d.total.requests, 4);

  const h = bucketize("hours", hours, NOW);
  assert.equal(h.buckets.length, 48);
  assert.equal(h.buckets[0]!.label, "2026-01-29T11");
  assert.equal(h.buckets.at(-1)!.label, "2026-01-31T10");
  assert.equal(h.buckets.at(-2)!.total.charged, 24n, "09:00 holds both series");
  assert.equal(h.total.charged, 31n, "the first day's hour is outside 48 hours");
});

Deno.test("chartSvg: one point per bucket with its totals, one rect per non-zero series, stacked to the plot top at the max", () => {
  const u = bucketize("hours", [
    hour(Date.UTC(2026, 0, 31, 9), "alpha", "k3", 3_000_000n, 40),
    hour(Date.UTC(2026, 0, 31, 9), "theta", "theta3.7-plus", 1_000_000n, 10),
    hour(Date.UTC(2026, 0, 31, 10), "alpha", "k3", 2_000_000n, 0),
  ], NOW);
  const svg = chartSvg(u, "charged", { chart: "usage-chart", point: "chart-point" }).text;
  assert.match(svg.trimStart(), /^<svg\s+data-testid="usage-chart"\s+data-range="hours"/);
  const pointsOf = (
    text: string,
    testid: string,
  ) => [...text.matchAll(new RegExp(`<g\\s+data-testid="${testid}"\\s([^>]*)>([\\s\\S]*?)</g>`, "g"))];
  const rect =
    /<rect\s+data-series="([^"]+)"\s+x="[\d.]+"\s+y="([\d.]+)"\s+width="[\d.]+"\s+height="([\d.]+)"/g;
  const points = pointsOf(svg, "chart-point");
  assert.equal(points.length, 48);
  assert.match(
    points[46]![1]!,
    /data-bucket="2026-01-31T09"\s+data-charged-usd="0.000004"\s+data-tokens="100"/,
  );
  const rects = [...points[46]![2]!.matchAll(rect)];
  assert.deepEqual(rects.map((r) => r[1]), ["alpha/k3", "theta/theta3.7-plus"]);
  // The tallest bar fills the plot (12 … 224): alpha at the bottom, theta on top of it.
  assert.equal(Number(rects[1]![2]), 12);
  assert.equal(Math.round(Number(rects[0]![3]) + Number(rects[1]![3])), 212);
  assert.equal(Math.round(Number(rects[0]![3]) / Number(rects[1]![3])), 3);
  assert.match(points[47]![1]!, /data-charged-usd="0.000002"\s+data-tokens="0"/);
  assert.deepEqual([...points[47]![2]!.matchAll(rect)].map((r) => r[1]), ["alpha/k3"]);
  assert.equal([...points[0]![2]!.matchAll(/<rect/g)].length, 0, "an empty hour has no bar");
  const tokens = pointsOf(
    chartSvg(u, "tokens", { chart: "tokens-chart", point: "tokens-point" }).text,
    "tokens-point",
  );
  assert.equal(tokens.length, 48);
  assert.deepEqual([...tokens[46]![2]!.matchAll(rect)].map((r) => r[1]), ["alpha/k3", "theta/theta3.7-plus"]);
  assert.equal([...tokens[47]![2]!.matchAll(rect)].length, 0, "charged but no tokens: no bar of tokens");
});

Deno.test("chartSvg: no usage → empty bars and a note; model names are escaped", () => {
  const empty =
    chartSvg(bucketize("days", [], NOW), "charged", { chart: "usage-chart", point: "chart-point" }).text;
  assert.equal([...empty.matchAll(/data-testid="chart-point"/g)].length, 30);
  assert.ok(!empty.includes("<rect data-series"));
  assert.match(empty, /Нет данных за период/);
  const odd = chartSvg(
    bucketize("days", [hour(NOW, "alpha", '<x y="1">', 1n)], NOW),
    "charged",
    { chart: "usage-chart", point: "chart-point" },
  ).text;
  assert.ok(odd.includes('data-series="alpha/&lt;x y=&quot;1&quot;&gt;"'));
  assert.ok(!odd.includes('<x y="1">'));
});
