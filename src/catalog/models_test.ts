import assert from "node:assert/strict";
import { findModel, MODELS } from "./models.ts";

Deno.test("catalog holds exactly the ids of spec §2.1 and §4.7", () => {
  const byFamily = (f: string) => MODELS.filter((m) => m.family === f).map((m) => m.id).sort();
  assert.deepEqual(byFamily("alpha"), ["alpha-for-coding", "alpha-for-coding-highspeed", "k3", "k3-256k"]);
  assert.deepEqual(byFamily("beta"), [
    "beta-fable-5",
    "beta-fable-5-1",
    "beta-haiku-4-5",
    "beta-opus-5",
    "beta-sonnet-5",
  ]);
  assert.deepEqual(byFamily("gamma"), ["gamma-2.5", "gamma-2.5-fast"]);
  assert.equal(byFamily("eta").length, 8);
  assert.ok(byFamily("eta").includes("delta-eta-4.6-xhigh-fast"));
  assert.equal(byFamily("theta").length, 7);
  assert.equal(new Set(MODELS.map((m) => m.id)).size, MODELS.length);
});

Deno.test("findModel matches exact ids only", () => {
  assert.equal(findModel("k3")?.contextWindow, 1_048_576);
  assert.equal(findModel("k3-256k")?.contextWindow, 262_144);
  assert.equal(findModel("gamma-2.5")?.images, false);
  assert.equal(findModel("delta-eta-4.6-high")?.contextWindow, 500_000);
  assert.equal(findModel("theta3.5-omni-plus")?.maxInputTokens, 196_608);
  assert.equal(findModel("theta3.7-max")?.images, false);
  for (const id of ["K3", "k3 ", "gamma-2.5-turbo", "theta3.8", ""]) {
    assert.equal(findModel(id), undefined, id);
  }
});
