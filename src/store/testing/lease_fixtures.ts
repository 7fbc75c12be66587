/** Shared by the lease contract suites (lease_contract.ts, lease_commit_contract.ts): fixed times and records. */
import assert from "node:assert/strict";
import type { Store } from "../store.ts";
import { keyRecord } from "./test_fixtures.ts";
import type { KeyRecord, SharedWindow } from "../types.ts";

export const HOUR = 3_600_000;
/** 10:30 UTC: the hour window starts at 10:00, the day window at midnight. */
export const T = Date.UTC(2026, 0, 1, 10, 30);
export const HOUR_10 = Date.UTC(2026, 0, 1, 10);
export const DAY_1 = Date.UTC(2026, 0, 1);
export const TTL = 1_000;

/** A key with `credit` credited and nothing spent. */
export const funded = (id: string, credit: bigint): KeyRecord =>
  keyRecord(id, { credited: credit, balance: credit });

/** A take whose decision is fixed. */
export const take = (
  store: Store,
  keyId: string,
  holder: string,
  now: number,
  grant: bigint,
  reserved = 0n,
  ttlMs = TTL,
) => store.takeLease({ keyId, holder, now, ttlMs, decide: () => ({ grant, reserved }) });

export interface Sums {
  hs: bigint;
  ds: bigint;
  hr: bigint;
  dr: bigint;
}

/** A window with the given sums (hour/day spent, hour/day reserved), by default the one of T. */
export function win(s: Partial<Sums> = {}, hourStart = HOUR_10, dayStart = DAY_1): SharedWindow {
  return {
    hourStart,
    dayStart,
    hourSpent: s.hs ?? 0n,
    daySpent: s.ds ?? 0n,
    hourReserved: s.hr ?? 0n,
    dayReserved: s.dr ?? 0n,
  };
}

export const min = (a: bigint, b: bigint) => a < b ? a : b;
export const sum = (xs: bigint[]) => xs.reduce((a, b) => a + b, 0n);

/** The key `id` as one keyChanges call returned it: at least once, and every time with the same record. */
export function byId(recs: KeyRecord[], id: string): KeyRecord | undefined {
  const found = recs.filter((r) => r.id === id);
  for (const r of found.slice(1)) assert.deepEqual(r, found[0], `${id} returned twice, differently`);
  return found[0];
}
