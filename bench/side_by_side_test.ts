import assert from "node:assert/strict";
import { SIDE_HEADING } from "./sections.ts";
import type { CpuUse } from "./cpu.ts";
import { withSideSections } from "./side_by_side.ts";
import { percentile, pooledLoads } from "./load.ts";
import { medianLatencies, medianRound } from "./side_by_side_report.ts";
import type { WrkResult } from "./wrk.ts";

const doc = "# Results\n\nbody\n";
const latest = `## ${SIDE_HEADING}\n\nlatest\n`;
const soak = "## Soak\n\nkept\n";

Deno.test("withSideSections: a run replaces its own section and keeps the others", () => {
  const previous = `${doc}\n${latest}\n${soak}`;
  const fresh = `## ${SIDE_HEADING}\n\nnew\n`;
  assert.equal(withSideSections(previous, { section: fresh }, previous), `${doc}\n${fresh}\n${soak}`);
  assert.equal(withSideSections(doc, { section: fresh }, previous), `${doc}\n${fresh}`);
});

Deno.test("withSideSections: a skipped run keeps what was there, or says why it is missing", () => {
  assert.equal(
    withSideSections(doc, { skipped: "skipped: no wrk" }, `${doc}\n${latest}`),
    `${doc}\n${latest}`,
  );
  assert.equal(
    withSideSections(doc, { skipped: "skipped: no wrk" }, doc),
    `${doc}\n## ${SIDE_HEADING}\n\nskipped: no wrk\n`,
  );
});

Deno.test("medianRound: the round with the middle rate (the lower middle of an even count), whole", () => {
  const round = (rps: number) => ({ wrk: { rps } as WrkResult, cpu: {} as CpuUse, wallMs: rps });
  const [a, b, c, d] = [round(18_000), round(16_500), round(19_700), round(17_200)];
  assert.equal(medianRound([a, b, c]), a);
  assert.equal(medianRound([c, a, b]), a);
  assert.equal(medianRound([a, b, c, d]), d);
  assert.equal(medianRound([b]), b);
  assert.throws(() => medianRound([]), RangeError);
});

Deno.test("medianLatencies: each percentile the median of the rounds' own, counts summed", () => {
  const w = (p50Ms: number, p99Ms: number) => ({ p50Ms, p99Ms, requests: 10, errors: 1 } as WrkResult);
  const m = medianLatencies([w(0.2, 3.0), w(0.1, 1.0), w(0.3, 2.0)]);
  assert.equal(m.p50Ms, 0.2);
  assert.equal(m.p99Ms, 2.0);
  assert.equal(m.requests, 30);
  assert.equal(m.errors, 3);
});

Deno.test("pooledLoads: percentiles over every run's samples, counts and windows summed", () => {
  const run = (ttfb: number[], seconds: number) => ({
    requests: ttfb.length,
    completed: ttfb.length + 1,
    wallMs: 1000 * seconds,
    errors: 0,
    seconds,
    rps: ttfb.length / seconds,
    latency: Float64Array.from(ttfb.map((t) => t * 2)).sort(),
    ttfb: Float64Array.from(ttfb).sort(),
    bytes: 5,
    chunks: 2,
  });
  const p = pooledLoads([run([3, 1], 1), run([2, 4], 3)]);
  assert.deepEqual([...p.ttfb], [1, 2, 3, 4]);
  assert.deepEqual([...p.latency], [2, 4, 6, 8]);
  assert.equal(p.requests, 4);
  assert.equal(p.completed, 6);
  assert.equal(p.rps, 1);
  assert.equal(percentile(p.ttfb, 50), percentile(Float64Array.from([1, 2, 3, 4]), 50));
});
