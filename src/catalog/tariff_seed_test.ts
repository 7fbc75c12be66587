import assert from "node:assert/strict";
import { chargeAmount, reserveAmount } from "../billing/price.ts";
import { Tariff } from "../billing/tariff.ts";
import { emptyUsage } from "../ir/usage.ts";
import { parseUsd } from "../money/usd.ts";
import { TARIFF_SEED } from "./tariff_seed.ts";

const tariff = new Tariff(TARIFF_SEED);
const usage = (input: number, output: number, cached = 0, searches = 0) => ({
  ...emptyUsage(),
  inputTokens: input,
  outputTokens: output,
  cachedInputTokens: cached,
  webSearchRequests: searches,
});

Deno.test("alpha prices of spec §8.1 per model, with cache reads out of ordinary input", () => {
  const cases: [string, string][] = [
    ["k3", "18.30"], // 1M in @3 − 0, cached 0; 1M out @15 → 18 + cache 1M@0.30 → 0.30
    ["k3-256k", "18.30"],
    ["alpha-for-coding", "5.14"],
    ["alpha-for-coding-highspeed", "10.28"],
  ];
  for (const [model, usd] of cases) {
    const r = tariff.rates(model, 2_000_000)!;
    // 2M input of which 1M cached, 1M output
    assert.equal(chargeAmount(r, usage(2_000_000, 1_000_000, 1_000_000), false), parseUsd(usd), model);
  }
});

Deno.test("private membership takes 25% off alpha reserve and charge, not theta", () => {
  const k3 = tariff.rates("k3", 1000)!;
  assert.equal(reserveAmount(k3, 1_000_000, 0, true), parseUsd("2.25"));
  assert.equal(chargeAmount(k3, usage(0, 1_000_000), true), parseUsd("11.25"));
  const th = tariff.rates("theta3.8-max", 1000)!;
  assert.equal(chargeAmount(th, usage(1_000_000, 0), true), parseUsd("2.00"));
});

Deno.test("theta plus tiers switch above 256,000 input tokens for input and output", () => {
  assert.equal(
    chargeAmount(tariff.rates("theta3.7-plus", 256_000)!, usage(256_000, 1_000_000), false),
    parseUsd("1.7024"),
  );
  assert.equal(
    chargeAmount(tariff.rates("theta3.7-plus", 256_001)!, usage(256_001, 1_000_000), false),
    parseUsd("5.1072012"),
  );
  assert.equal(
    chargeAmount(tariff.rates("theta3.5-plus", 300_000)!, usage(1_000_000, 1_000_000), false),
    parseUsd("3.50"),
  );
  assert.equal(
    chargeAmount(tariff.rates("theta3.8-omni-flash", 1)!, usage(1_000_000, 1_000_000), false),
    parseUsd("0.62"),
  );
});

Deno.test("theta search surcharge is 0.01 once; beta 0.01 per search; theta has no cache", () => {
  const th = tariff.rates("theta3.8-max", 10)!;
  assert.equal(chargeAmount(th, usage(0, 0, 0, 3), false), parseUsd("0.01"));
  assert.equal(chargeAmount(th, usage(1_000_000, 0, 500_000), false), parseUsd("2.00"));
  const beta = tariff.rates("beta-haiku-4-5", 10)!;
  assert.equal(chargeAmount(beta, usage(0, 0, 0, 3), false), parseUsd("0.03"));
});

Deno.test("reserve uses the output budget and rounds at the smallest unit", () => {
  const r = tariff.rates("alpha-for-coding", 10)!;
  assert.equal(reserveAmount(r, 1, 1, false), 950_000n + 4_000_000n);
  assert.equal(reserveAmount(r, 1, 0, true), 712_500n);
  assert.equal(reserveAmount(tariff.rates("k3", 1)!, 0, 1, true), 11_250_000n);
});
