import assert from "node:assert/strict";
import { SIDE_BASELINE_HEADING, SIDE_HEADING } from "./sections.ts";
import type { CpuUse } from "./cpu.ts";
import { withSideSections } from "./side_by_side.ts";
import { medianRound } from "./side_by_side_report.ts";
import type { WrkResult } from "./wrk.ts";

const doc = "# Results\n\nbody\n";
const baseline = `## ${SIDE_BASELINE_HEADING}\n\nbefore\n`;
const latest = `## ${SIDE_HEADING}\n\nlatest\n`;

Deno.test("withSideSections: a run replaces its own section and keeps the baseline", () => {
  const previous = `${doc}\n${baseline}\n${latest}`;
  const fresh = `## ${SIDE_HEADING}\n\nnew\n`;
  assert.equal(
    withSideSections(doc, { heading: SIDE_HEADING, section: fresh }, previous),
    `${doc}\n${baseline}\n${fresh}`,
  );
});

Deno.test("withSideSections: a baseline run writes the baseline; a skipped run keeps what was there", () => {
  const fresh = `## ${SIDE_BASELINE_HEADING}\n\nbefore, again\n`;
  assert.equal(
    withSideSections(doc, { heading: SIDE_BASELINE_HEADING, section: fresh }, doc),
    `${doc}\n${fresh}`,
  );
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
