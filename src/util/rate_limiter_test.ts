import assert from "node:assert/strict";
import { GcraLimiter } from "./rate_limiter.ts";

const T0 = 1_700_000_000_000;

Deno.test("GCRA: the burst is admitted back to back, the next request waits one interval", () => {
  const l = new GcraLimiter({ ratePerSecond: 1, burst: 3 });
  for (let i = 0; i < 3; i++) assert.equal(l.take("k", T0), 0);
  assert.equal(l.take("k", T0), 1);
  assert.equal(l.take("k", T0 + 999), 1, "1 ms short: still refused, still 1 s");
  assert.equal(l.take("k", T0 + 1000), 0, "exactly at Retry-After: admitted");
  assert.equal(l.take("k", T0 + 1000), 1);
});

Deno.test("GCRA: Retry-After is the excess rounded up to whole seconds, and retrying then succeeds", () => {
  // One request every 2.5 s, burst 2: the third at T0 waits 2.5 s → Retry-After 3.
  const l = new GcraLimiter({ ratePerSecond: 0.4, burst: 2 });
  assert.equal(l.take("k", T0), 0);
  assert.equal(l.take("k", T0), 0);
  assert.equal(l.take("k", T0), 3);
  assert.equal(l.take("k", T0 + 2000), 1, "0.5 s left → 1");
  assert.equal(l.take("k", T0 + 2499), 1, "1 ms left → 1, never 0");
  assert.equal(l.take("k", T0 + 2500), 0);
  // Fractional intervals stay exact: 3/s is 333,333 µs each.
  const f = new GcraLimiter({ ratePerSecond: 3, burst: 1 });
  assert.equal(f.take("k", T0), 0);
  assert.equal(f.take("k", T0 + 333), 1);
  assert.equal(f.take("k", T0 + 334), 0);
});

Deno.test("GCRA: refill is at the rate and never beyond the burst; refusals are not counted", () => {
  const l = new GcraLimiter({ ratePerSecond: 10, burst: 5 });
  for (let i = 0; i < 5; i++) assert.equal(l.take("k", T0), 0);
  for (let i = 0; i < 50; i++) assert.equal(l.take("k", T0 + 50), 1, "refused requests change nothing");
  assert.equal(l.take("k", T0 + 100), 0, "100 ms = one request at 10/s");
  assert.equal(l.take("k", T0 + 100), 1);
  assert.equal(l.take("k", T0 + 350), 0);
  assert.equal(l.take("k", T0 + 350), 0);
  assert.equal(l.take("k", T0 + 350), 1, "250 ms = two and a half intervals: two requests");
  // A long idle spell refills the burst, not more.
  for (let i = 0; i < 5; i++) assert.equal(l.take("k", T0 + 3_600_000), 0);
  assert.equal(l.take("k", T0 + 3_600_000), 1);
  assert.equal(l.take("other", T0 + 3_600_000), 0, "each id has its own bucket");
});

Deno.test("GCRA: a clock stepping back does not admit extra requests", () => {
  const l = new GcraLimiter({ ratePerSecond: 1, burst: 1 });
  assert.equal(l.take("k", T0), 0);
  assert.equal(
    l.take("k", T0 - 5000),
    6,
    "waits until the stored arrival time (T0 + 1 s), 6 s after this now",
  );
  assert.equal(l.take("k", T0 + 1000), 0);
});

Deno.test("GCRA: expired buckets are swept; a flood of distinct ids never grows the map past its bound", () => {
  const l = new GcraLimiter({ ratePerSecond: 1, burst: 2 }, { maxEntries: 1000 });
  for (let i = 0; i < 1000; i++) assert.equal(l.take(`a${i}`, T0), 0);
  assert.equal(l.size, 1000);
  // Two seconds later every one of them is full again: the first new id sweeps them all.
  assert.equal(l.take("fresh", T0 + 2000), 0);
  assert.equal(l.size, 1);
  // A flood of live buckets (all within one interval): the least recently admitted are evicted.
  const keep = "steady";
  for (let i = 0; i < 100_000; i++) {
    assert.equal(l.take(`flood${i}`, T0 + 3000), 0);
    if (i % 100 === 0) l.take(keep, T0 + 3000 + Math.floor(i / 100) * 1000);
    assert.ok(l.size <= 1000);
  }
  assert.ok(l.size > 800, `the bound evicts down to 7/8, not to nothing (${l.size})`);
  // An evicted id merely gets a fresh bucket.
  assert.equal(l.take("flood0", T0 + 3000), 0);
});

Deno.test("GCRA: buckets idle for a minute are swept even below the bound", () => {
  const l = new GcraLimiter({ ratePerSecond: 100, burst: 100 });
  for (let i = 0; i < 500; i++) l.take(`ip${i}`, T0);
  assert.equal(l.size, 500);
  l.take("late", T0 + 61_000);
  assert.equal(l.size, 1);
});

Deno.test("GCRA: bad limits are refused", () => {
  assert.throws(() => new GcraLimiter({ ratePerSecond: 0, burst: 1 }), RangeError);
  assert.throws(() => new GcraLimiter({ ratePerSecond: 1, burst: 0 }), RangeError);
  assert.throws(() => new GcraLimiter({ ratePerSecond: 1, burst: 1.5 }), RangeError);
  assert.throws(() => new GcraLimiter({ ratePerSecond: Infinity, burst: 1 }), RangeError);
});

Deno.test("GCRA: wait answers what take would, and counts nothing", () => {
  const l = new GcraLimiter({ ratePerSecond: 10 / 60, burst: 10 });
  for (let i = 0; i < 10; i++) {
    assert.equal(l.wait("a", 0), 0);
    assert.equal(l.take("a", 0), 0);
  }
  assert.equal(l.wait("a", 0), 6, "a burst of 10, then one every 6 s");
  assert.equal(l.wait("a", 0), 6, "asking again counts nothing");
  assert.equal(l.take("a", 0), 6);
  assert.equal(l.wait("a", 6_000), 0);
  assert.equal(l.wait("b", 0), 0, "other ids have their own bucket");
});
