/**
 * The shared cap windows of a key (types.ts SharedWindow), as both stores roll and add to them: the same
 * UTC clock hour and day as the in-process windows (src/accounts/windows.ts).
 */
import type { SharedWindow } from "./types.ts";

export const HOUR = 3_600_000;
export const DAY = 86_400_000;

/** The starts of the UTC clock hour and day that hold `now`. */
export function windowStarts(now: number): { hourStart: number; dayStart: number } {
  return { hourStart: now - (now % HOUR), dayStart: now - (now % DAY) };
}

export function emptyWindow(now: number): SharedWindow {
  return {
    ...windowStarts(now),
    hourSpent: 0n,
    daySpent: 0n,
    hourReserved: 0n,
    dayReserved: 0n,
  };
}

/** `w` as seen at `now` (a new object): a window that has ended reads as the current one, empty. A window
 *  stamped later than `now` (another process's clock ran ahead) is kept as it is. */
export function rollWindow(w: SharedWindow | null | undefined, now: number): SharedWindow {
  const fresh = emptyWindow(now);
  if (!w) return fresh;
  const sameHour = w.hourStart >= fresh.hourStart;
  const sameDay = w.dayStart >= fresh.dayStart;
  return {
    hourStart: sameHour ? w.hourStart : fresh.hourStart,
    dayStart: sameDay ? w.dayStart : fresh.dayStart,
    hourSpent: sameHour ? w.hourSpent : 0n,
    daySpent: sameDay ? w.daySpent : 0n,
    hourReserved: sameHour ? w.hourReserved : 0n,
    dayReserved: sameDay ? w.dayReserved : 0n,
  };
}

/** `w` rolled to `now` with `spent` and `reserved` added to the hour and the day. */
export function addToWindow(
  w: SharedWindow | null | undefined,
  now: number,
  spent: bigint,
  reserved: bigint,
): SharedWindow {
  const r = rollWindow(w, now);
  r.hourSpent += spent;
  r.daySpent += spent;
  r.hourReserved += reserved;
  r.dayReserved += reserved;
  return r;
}
