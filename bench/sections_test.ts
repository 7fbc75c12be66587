import assert from "node:assert/strict";
import {
  CPU_HEADING,
  HAND_RECORDED_HEADINGS,
  NOTES_HEADING,
  SHARED_HEADING,
  SIDE_BASELINE_HEADING,
  SIDE_HEADING,
  SOAK_HEADING,
  THETA_HEADING,
} from "./sections.ts";

// A `## ` section that no script writes and `deno task bench` does not keep is erased by the next full run.
Deno.test("bench/RESULTS.md: every section is one a bench script writes or `deno task bench` keeps", async () => {
  const doc = await Deno.readTextFile(new URL("./RESULTS.md", import.meta.url));
  const known = new Set([
    CPU_HEADING,
    NOTES_HEADING,
    THETA_HEADING,
    SHARED_HEADING,
    SOAK_HEADING,
    SIDE_HEADING,
    SIDE_BASELINE_HEADING,
    ...HAND_RECORDED_HEADINGS,
  ]);
  const headings = [...doc.matchAll(/^## (.+)$/gm)].map((m) => m[1]!);
  assert.ok(headings.length >= known.size - 1, `sections: ${headings.join(" | ")}`);
  assert.deepEqual(headings.filter((h) => !known.has(h)), []);
});
