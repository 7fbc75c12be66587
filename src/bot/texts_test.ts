import assert from "node:assert/strict";
import { price, usd } from "./texts.ts";

Deno.test("texts: prices in the currency's units, Stars whole; USD exact", () => {
  assert.equal(price(50, "XTR"), "50 XTR");
  assert.equal(price(1990, "RUB"), "19.90 RUB");
  assert.equal(price(5, "USD"), "0.05 USD");
  assert.equal(price(500, "JPY"), "500 JPY");
  assert.equal(usd(12_500_000_000_000n), "$12.50");
  assert.equal(usd(1n), "$0.000000000001");
  assert.equal(usd(-1_000_000_000_000n), "-$1.00");
});
