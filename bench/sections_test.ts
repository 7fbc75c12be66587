import assert from "node:assert/strict";
import {
  CPU_HEADING,
  IDEMPOTENCY_HEADING,
  NOTES_HEADING,
  SHARED_HEADING,
  SIDE_HEADING,
  SOAK_HEADING,
  THETA_HEADING,
} from "./sections.ts";

// A `## ` section that no script writes is erased by the next full run: RESULTS.md holds only what the bench
// scripts write (findings and their history live in docs/performance.md and git).
Deno.test("bench/RESULTS.md: every section is one a bench script writes", async () => {
  const doc = await Deno.readTextFile(new URL("./RESULTS.md", import.meta.url));
  const known = [
    CPU_HEADING,
    NOTES_HEADING,
    THETA_HEADING,
    SHARED_HEADING,
    SOAK_HEADING,
    SIDE_HEADING,
    IDEMPOTENCY_HEADING,
  ];
  const headings = [...doc.matchAll(/^## (.+)$/gm)].map((m) => m[1]!);
  assert.deepEqual(headings.filter((h) => !known.includes(h)), []);
  assert.deepEqual(known.filter((h) => !headings.includes(h)), []);
});
