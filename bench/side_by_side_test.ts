import assert from "node:assert/strict";
import { SIDE_HEADING } from "./sections.ts";
import type { CpuUse } from "./cpu.ts";
import { withSideSections } from "./side_by_side.ts";
import { percentile, pooledLoads } from "./load.ts";
import { judge, type Judged, medianLatencies, medianRound, TARGET } from "./side_by_side_report.ts";
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
  const round = (rps: number) => ({
    wrk: { rps } as WrkResult,
    cpu: {} as CpuUse,
    wallMs: rps,
    peakRssKiB: 0,
  });
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

/** Figures where the gateway meets every target exactly at its bound. */
function atBounds(): Judged {
  const mem = { idleKiB: 100 * 1024, streamStartKiB: 150 * 1024, restedKiB: 150 * 1024 };
  return {
    rps: { json: { gateway: 10_000, bare: 10_000 }, stream: { gateway: 4_000, bare: 4_000 } },
    cpuMs: { json: { gateway: 0.11, bare: 0.1 }, stream: { gateway: 0.22, bare: 0.2 } },
    add50: { json: { gateway: 0.3, bare: 0.2 }, ttfb: { gateway: 0.4, bare: 0.3 } },
    peakKiB: {
      json: { gateway: 150 * 1024, bare: 100 * 1024 },
      stream: { gateway: 300 * 1024, bare: 200 * 1024 },
    },
    memory: { gateway: mem, bare: { ...mem, idleKiB: 40 * 1024, restedKiB: 45 * 1024 } },
  };
}

Deno.test("judge: every target passes at its bound and fails just past it", () => {
  assert.equal(TARGET.rateShare, 1.0);
  const ok = judge(atBounds());
  assert.equal(ok.length, 8);
  assert.deepEqual(ok.map((v) => v.ok), [true, true, true, true, true, true, true, true]);
  const past: ((f: Judged) => void)[] = [
    (f) => f.rps.json.gateway = 9_999,
    (f) => f.rps.stream.gateway = 3_999,
    (f) => f.cpuMs.json.gateway = 0.1101,
    (f) => f.cpuMs.stream.gateway = 0.2201,
    (f) => f.add50.ttfb.gateway = 0.4001,
    (f) => f.peakKiB.json.gateway = 150 * 1024 + 1,
    (f) => f.peakKiB.stream.gateway = 300 * 1024 + 1,
    (f) => f.memory.gateway.restedKiB = 150 * 1024 + 1,
  ];
  past.forEach((push, i) => {
    const f = atBounds();
    push(f);
    const v = judge(f);
    assert.deepEqual(v.map((x) => x.ok), v.map((_, j) => j !== i), `target ${i}: ${v[i]!.target}`);
  });
});

Deno.test("judge: the figures are shown as the table prints them", () => {
  const v = judge(atBounds());
  assert.equal(v[0]!.gateway, "1.00× (10,000 / 10,000)");
  assert.equal(v[2]!.gateway, "0.110 ms (1.10×)");
  assert.equal(v[4]!.gateway, "+0.300 ms / +0.400 ms");
  assert.equal(v[4]!.bare, "+0.200 ms / +0.300 ms");
  assert.equal(v[6]!.gateway, "300 MiB (1.50×)");
  assert.equal(v[7]!.gateway, "150 MiB (idle 100 MiB, +50 MiB)");
});

Deno.test("judge: against the bare proxy with spec §2.5's answer head, the JSON rate and CPU are judged again", () => {
  const f = { ...atBounds(), specHead: { rps: 9_000, cpuMs: 0.1 } };
  const v = judge(f);
  assert.equal(v.length, 10);
  assert.deepEqual(v.map((x) => x.ok), Array(10).fill(true));
  assert.equal(v[8]!.gateway, "1.11× (10,000 / 9,000)");
  assert.equal(v[8]!.bare, "9,000 (0.90× and 1.00× the bare proxy's)");
  assert.equal(v[9]!.gateway, "0.110 ms (1.10×)");
  // Just past each bound: only that row fails.
  const rate = judge({ ...f, specHead: { rps: 10_001, cpuMs: 0.1 } });
  assert.deepEqual(rate.map((x) => x.ok), rate.map((_, i) => i !== 8));
  const cpu = judge({ ...f, specHead: { rps: 9_000, cpuMs: 0.0999 } });
  assert.deepEqual(cpu.map((x) => x.ok), cpu.map((_, i) => i !== 9));
});

Deno.test("judge: the c=1 rounds with every process on any core are a row beside the target, on the same bound", () => {
  const shared = () => ({
    ...atBounds(),
    add50Shared: { json: { gateway: 0.5, bare: 0.4 }, ttfb: { gateway: 0.6, bare: 0.5 } },
  });
  const v = judge(shared());
  assert.equal(v.length, 9);
  assert.deepEqual(v.map((x) => x.ok), Array(9).fill(true));
  assert.match(v[4]!.target, /JSON \/ stream TTFB \(each proxy on a core of its own\)$/);
  assert.match(v[5]!.target, /^The same with every process on any core/);
  assert.equal(v[5]!.gateway, "+0.500 ms / +0.600 ms");
  assert.equal(v[5]!.bare, "+0.400 ms / +0.500 ms");
  assert.equal(v[6]!.gateway, "150 MiB (1.50×)");
  // Just past the bound on shared cores: only that row fails; past it on the own core: only the target.
  const f = shared();
  f.add50Shared.ttfb.gateway = 0.6001;
  assert.deepEqual(judge(f).map((x) => x.ok), Array.from({ length: 9 }, (_, i) => i !== 5));
  const g = shared();
  g.add50.json.gateway = 0.3001;
  assert.deepEqual(judge(g).map((x) => x.ok), Array.from({ length: 9 }, (_, i) => i !== 4));
});
