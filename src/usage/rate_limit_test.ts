import assert from "node:assert/strict";
import { TokenBuckets } from "./rate_limit.ts";

Deno.test("token bucket: burst, then refill at the rate, per id", () => {
  const b = new TokenBuckets(10, 20);
  for (let i = 0; i < 20; i++) assert.equal(b.take("a", 1000), 0);
  assert.equal(b.take("a", 1000), 1);
  assert.equal(b.take("b", 1000), 0, "other ids have their own bucket");
  assert.equal(b.take("a", 1100), 0, "100 ms refill one token at 10/s");
  assert.equal(b.take("a", 1100), 1);
  for (let i = 0; i < 20; i++) assert.equal(b.take("a", 10_000), 0);
  assert.equal(b.take("a", 10_000), 1);
  const slow = new TokenBuckets(0.1, 1);
  assert.equal(slow.take("a", 0), 0);
  assert.equal(slow.take("a", 0), 10);
});
