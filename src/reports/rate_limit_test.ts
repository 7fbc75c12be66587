import assert from "node:assert/strict";
import { usageReadLimiter } from "./rate_limit.ts";

Deno.test("usage read limit: burst 20, then refill at 10/s, per key", () => {
  const b = usageReadLimiter();
  for (let i = 0; i < 20; i++) assert.equal(b.take("a", 1000), 0);
  assert.equal(b.take("a", 1000), 1);
  assert.equal(b.take("b", 1000), 0, "other ids have their own bucket");
  assert.equal(b.take("a", 1100), 0, "100 ms refill one read at 10/s");
  assert.equal(b.take("a", 1100), 1);
  for (let i = 0; i < 20; i++) assert.equal(b.take("a", 10_000), 0);
  assert.equal(b.take("a", 10_000), 1);
  const slow = usageReadLimiter({ ratePerSecond: 0.1, burst: 1 });
  assert.equal(slow.take("a", 0), 0);
  assert.equal(slow.take("a", 0), 10);
});
