import assert from "node:assert/strict";
import { newCounters, roll, type WindowCounters } from "./windows.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import type { Caps } from "../store/types.ts";
import { type CapCodes, checkCaps } from "./caps.ts";

const HOUR = 3_600_000;
const at = (h: number, m = 0, s = 0, ms = 0) => Date.UTC(2026, 2, 14, h, m, s, ms);

const COMMON: CapCodes = {
  hourly_reserve_limit: "hourly_reserve_limit",
  daily_reserve_limit: "daily_reserve_limit",
  hourly_spend_limit: "hourly_spend_limit",
  daily_spend_limit: "daily_spend_limit",
};
const DELTA: CapCodes = {
  hourly_reserve_limit: "delta_hourly_reserve_limit",
  daily_reserve_limit: "delta_daily_reserve_limit",
  hourly_spend_limit: "delta_hourly_spend_limit",
  daily_spend_limit: "delta_daily_spend_limit",
};

const noCaps: Caps = { hourlySpend: null, dailySpend: null, hourlyReserve: null, dailyReserve: null };

function counters(now: number, over: Partial<WindowCounters> = {}): WindowCounters {
  return { ...newCounters(now), ...over };
}

/** The error checkCaps throws (undefined when the reserve passes). */
function refusal(caps: Partial<Caps>, c: WindowCounters, reserve: bigint, now: number, codes = COMMON) {
  try {
    checkCaps({ ...noCaps, ...caps }, c, reserve, codes, now);
    return undefined;
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    return { code: err.code, retryAfter: err.retryAfter };
  }
}

Deno.test("newCounters starts the windows at the UTC clock hour and the UTC day", () => {
  const c = newCounters(at(13, 59, 59, 999));
  assert.equal(c.hourStart, at(13));
  assert.equal(c.dayStart, at(0));
});

Deno.test("roll resets the hour counters at the hour boundary and keeps the day's", () => {
  const c = counters(at(13, 10), {
    hourSpent: 5n,
    daySpent: 7n,
    hourReserved: 11n,
    dayReserved: 13n,
    open: 3n,
  });
  roll(c, at(13, 59, 59, 999));
  assert.deepEqual([c.hourSpent, c.hourReserved, c.hourStart], [5n, 11n, at(13)], "still the same hour");
  roll(c, at(14));
  assert.equal(c.hourStart, at(14));
  assert.deepEqual([c.hourSpent, c.hourReserved], [0n, 0n]);
  assert.deepEqual([c.daySpent, c.dayReserved, c.dayStart], [7n, 13n, at(0)]);
  assert.equal(c.open, 3n, "open holds are still open in the new window");
});

Deno.test("roll resets both windows at UTC midnight and jumps over skipped hours", () => {
  const c = counters(at(23, 30), {
    hourSpent: 5n,
    daySpent: 7n,
    hourReserved: 11n,
    dayReserved: 13n,
    open: 3n,
  });
  const next = Date.UTC(2026, 2, 15, 0, 0, 0, 0);
  roll(c, next);
  assert.equal(c.dayStart, next);
  assert.equal(c.hourStart, next);
  assert.deepEqual([c.hourSpent, c.daySpent, c.hourReserved, c.dayReserved, c.open], [0n, 0n, 0n, 0n, 3n]);
  // Three hours later: the hour window starts at the current clock hour, not one hour after the last.
  roll(c, next + 3 * HOUR + 5_000);
  assert.equal(c.hourStart, next + 3 * HOUR);
  assert.equal(c.dayStart, next);
});

Deno.test("checkCaps refuses a reserve that would cross a cap and admits one that reaches it", () => {
  const c = counters(at(10), { hourReserved: 60n });
  assert.equal(refusal({ hourlyReserve: 100n }, c, 40n, at(10)), undefined);
  assert.equal(refusal({ hourlyReserve: 100n }, c, 41n, at(10))?.code, "hourly_reserve_limit");
});

Deno.test("checkCaps checks reserve caps before spend caps, the hour before the day", () => {
  const now = at(10);
  const c = counters(now, { hourReserved: 90n, dayReserved: 90n, hourSpent: 90n, daySpent: 90n });
  const all = { hourlyReserve: 100n, dailyReserve: 100n, hourlySpend: 100n, dailySpend: 100n };
  assert.equal(refusal(all, c, 20n, now)?.code, "hourly_reserve_limit");
  assert.equal(refusal({ ...all, hourlyReserve: null }, c, 20n, now)?.code, "daily_reserve_limit");
  assert.equal(
    refusal({ ...all, hourlyReserve: null, dailyReserve: null }, c, 20n, now)?.code,
    "hourly_spend_limit",
  );
  assert.equal(refusal({ dailySpend: 100n }, c, 20n, now)?.code, "daily_spend_limit");
  assert.equal(refusal({}, c, 1_000_000n, now), undefined, "no caps, no refusal");
});

Deno.test("checkCaps sets Retry-After to the seconds left in the crossed window", () => {
  const now = at(10, 59, 58, 500);
  const c = counters(now);
  assert.equal(refusal({ hourlyReserve: 1n }, c, 2n, now)?.retryAfter, 2, "1.5 s rounds up");
  assert.equal(refusal({ hourlySpend: 1n }, c, 2n, now)?.retryAfter, 2);
  const dayLeft = Math.ceil((Date.UTC(2026, 2, 15) - now) / 1000);
  assert.equal(refusal({ dailyReserve: 1n }, c, 2n, now)?.retryAfter, dayLeft);
  assert.equal(refusal({ dailySpend: 1n }, c, 2n, now)?.retryAfter, dayLeft);
  assert.equal(refusal({ hourlySpend: 1n }, counters(at(7)), 2n, at(7))?.retryAfter, 3600);
});

Deno.test("checkCaps counts open holds against the spend caps but not the reserve caps", () => {
  const now = at(10);
  const c = counters(now, { hourSpent: 20n, daySpent: 20n, open: 50n });
  assert.equal(refusal({ hourlySpend: 100n }, c, 30n, now), undefined);
  assert.equal(refusal({ hourlySpend: 100n }, c, 31n, now)?.code, "hourly_spend_limit");
  assert.equal(refusal({ dailySpend: 100n }, c, 31n, now)?.code, "daily_spend_limit");
  assert.equal(refusal({ hourlyReserve: 40n }, c, 40n, now), undefined, "open holds are not reserve");
});

Deno.test("checkCaps throws the family's own code for each cap", () => {
  const now = at(10);
  const c = counters(now);
  assert.equal(refusal({ hourlyReserve: 1n }, c, 2n, now, DELTA)?.code, "delta_hourly_reserve_limit");
  assert.equal(refusal({ dailyReserve: 1n }, c, 2n, now, DELTA)?.code, "delta_daily_reserve_limit");
  assert.equal(refusal({ hourlySpend: 1n }, c, 2n, now, DELTA)?.code, "delta_hourly_spend_limit");
  assert.equal(refusal({ dailySpend: 1n }, c, 2n, now, DELTA)?.code, "delta_daily_spend_limit");
  const err = refusal({ dailySpend: 1n }, c, 2n, now, DELTA);
  assert.equal(err?.retryAfter, 14 * 3600);
});
