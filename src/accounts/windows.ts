/**
 * The key's spend and reserve counters over UTC calendar windows (the clock hour and the UTC day), kept
 * with the account in memory; the Ledger checks a hold against them (caps.ts) (spec §5.5, §7.3).
 */

import { DAY, HOUR } from "../store/shared_window.ts";

export { DAY, HOUR };

export interface WindowCounters {
  hourStart: number;
  dayStart: number;
  hourSpent: bigint;
  daySpent: bigint;
  hourReserved: bigint;
  dayReserved: bigint;
  /** Holds currently open, counted against spend caps until they settle. */
  open: bigint;
}

export function newCounters(now: number): WindowCounters {
  return {
    hourStart: now - (now % HOUR),
    dayStart: now - (now % DAY),
    hourSpent: 0n,
    daySpent: 0n,
    hourReserved: 0n,
    dayReserved: 0n,
    open: 0n,
  };
}

/** Rolls the windows forward when the clock has passed their end. */
export function roll(c: WindowCounters, now: number): WindowCounters {
  if (now - c.hourStart >= HOUR) {
    c.hourStart = now - (now % HOUR);
    c.hourSpent = 0n;
    c.hourReserved = 0n;
  }
  if (now - c.dayStart >= DAY) {
    c.dayStart = now - (now % DAY);
    c.daySpent = 0n;
    c.dayReserved = 0n;
  }
  return c;
}
