/** What both stores share about hourly usage sums (store.ts usageHours): where a row counts, valid bounds. */
import { HOUR } from "./shared_window.ts";
import type { UsageRow } from "./types.ts";

/** The start of the UTC hour a row counts in (its `createdAt`'s), as the shared cap windows roll. */
export function hourOf(u: UsageRow): number {
  return u.createdAt - (u.createdAt % HOUR);
}

/** Bounds are integer Unix ms (both stores compare them exactly); RangeError otherwise. */
export function checkHourRange(fromMs: number, toMs: number): void {
  if (!Number.isSafeInteger(fromMs) || !Number.isSafeInteger(toMs)) {
    throw new RangeError(`usageHours: bounds must be integer Unix ms (${fromMs}, ${toMs})`);
  }
}
