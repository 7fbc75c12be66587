import assert from "node:assert/strict";
import { ceilDiv, formatUsd, parseUsd } from "./usd.ts";

Deno.test("parseUsd and formatUsd round-trip exact amounts", () => {
  assert.equal(parseUsd("10.00"), 10_000_000_000_000n);
  assert.equal(parseUsd("0.000000000001"), 1n);
  assert.equal(parseUsd("0"), 0n);
  assert.equal(formatUsd(parseUsd("10")), "10.00");
  assert.equal(formatUsd(1_500_000_000_000n), "1.50");
  assert.equal(formatUsd(123n), "0.000000000123");
  assert.equal(formatUsd(-parseUsd("0.25")), "-0.25");
  for (const bad of ["-1", "1.0000000000001", "abc", "", "1e3", "0x10"]) {
    assert.throws(() => parseUsd(bad), RangeError, bad);
  }
});

Deno.test("ceilDiv rounds up", () => {
  assert.equal(ceilDiv(10n, 3n), 4n);
  assert.equal(ceilDiv(9n, 3n), 3n);
  assert.equal(ceilDiv(0n, 3n), 0n);
});
