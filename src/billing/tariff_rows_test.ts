import assert from "node:assert/strict";
import { GatewayError } from "../errors/gateway_error.ts";
import { applyTariffChange, checkTable, reconcileTariff } from "./tariff_rows.ts";
import { TARIFF_SEED, type TariffRow } from "../catalog/tariff_seed.ts";

Deno.test("tariff rows: the seed is a valid table and reconciles unchanged once stored", () => {
  checkTable(TARIFF_SEED);
  const seeded = reconcileTariff(null);
  assert.equal(seeded.changed, true);
  assert.equal(seeded.rows.length, TARIFF_SEED.length);
  assert.deepEqual(reconcileTariff(seeded.rows), { rows: seeded.rows, changed: false });
});

Deno.test("tariff rows: stored rows of retired models are dropped, new catalog models get seed rows", () => {
  const stored: TariffRow[] = [
    ...TARIFF_SEED.filter((r) => r.model !== "k3-256k"),
    { model: "retired-model", input: "1.00", output: "2.00" },
  ];
  const { rows, changed } = reconcileTariff(stored);
  assert.equal(changed, true);
  assert.ok(!rows.some((r) => r.model === "retired-model"));
  assert.deepEqual(
    rows.filter((r) => r.model === "k3-256k"),
    TARIFF_SEED.filter((r) => r.model === "k3-256k"),
  );
});

Deno.test("tariff rows: a change is canonicalised and checked as a whole", () => {
  const next = applyTariffChange(TARIFF_SEED, {
    rows: [{
      model: "k3",
      input_usd_per_million: "3.5",
      output_usd_per_million: "16",
      member_discount: true,
    }],
  });
  assert.deepEqual(next.find((r) => r.model === "k3"), {
    model: "k3",
    input: "3.50",
    output: "16.00",
    memberDiscount: true,
  });
  assert.equal(next.length, TARIFF_SEED.length);
  assert.throws(
    () => checkTable(TARIFF_SEED.filter((r) => r.model !== "k3")),
    (e) => e instanceof GatewayError && e.param === "rows" && /k3/.test(e.detail ?? ""),
  );
});
