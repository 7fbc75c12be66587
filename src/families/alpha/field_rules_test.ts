import assert from "node:assert/strict";
import { ALPHA_FIELD_RULES } from "./field_rules.ts";

Deno.test("alpha field table: refusing rows name their reason; one row per field and surface", () => {
  for (const row of ALPHA_FIELD_RULES) {
    const refuses = row.check.kind !== "accept" || row.onlyModels || row.refusedOn;
    if (refuses) assert.ok(row.detail !== "", `${row.field}: a refusing row needs its detail`);
    assert.ok(row.surfaces.length > 0, row.field);
  }
  const seen = new Set<string>();
  for (const row of ALPHA_FIELD_RULES) {
    for (const s of row.surfaces) {
      assert.ok(!seen.has(`${s}:${row.field}`), `two rows for ${row.field} on ${s}`);
      seen.add(`${s}:${row.field}`);
    }
  }
});

Deno.test("alpha field table: temperature/top_p removed on Chat and Responses, passed through on Messages", () => {
  for (const field of ["temperature", "top_p"]) {
    const rows = ALPHA_FIELD_RULES.filter((r) => r.field === field);
    const removedOn = rows.filter((r) => r.remove).flatMap((r) => r.surfaces).sort();
    const acceptedOn = rows.filter((r) => r.rule === "accept").flatMap((r) => r.surfaces);
    assert.deepEqual(removedOn, ["openai_chat", "openai_responses"], field);
    assert.deepEqual(acceptedOn, ["anthropic"], field);
  }
});
