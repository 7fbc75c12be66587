import assert from "node:assert/strict";
import { SIDE_BASELINE_HEADING, SIDE_HEADING } from "./sections.ts";
import { withSideSections } from "./side_by_side.ts";

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
