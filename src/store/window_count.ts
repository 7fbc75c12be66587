/**
 * The rule both stores apply to a key's request count (store.ts WindowCounters): one more request over the
 * UTC hour and day, refused when a window is full.
 */
import { windowStarts } from "./shared_window.ts";

/** A key's count of one counter: requests in the hour and the day starting at `hourStart`, `dayStart`. */
export interface RequestCount {
  hourStart: number;
  hour: number;
  dayStart: number;
  day: number;
}

export type CountLimits = { hour: number | null; day: number | null };
export type CountVerdict = "ok" | "hour" | "day";

/**
 * The verdict on one more request at `now` after `prev`, and the count to write when it is "ok" (null:
 * write nothing). Windows roll as shared_window.ts rollWindow does: one that has ended counts zero; one
 * stamped later than `now` (another process's clock ran ahead) is kept.
 */
export function countOneMore(
  prev: RequestCount | null,
  now: number,
  limits: CountLimits,
): { verdict: CountVerdict; next: RequestCount | null } {
  const { hourStart, dayStart } = windowStarts(now);
  const sameHour = prev !== null && prev.hourStart >= hourStart;
  const sameDay = prev !== null && prev.dayStart >= dayStart;
  const hour = sameHour ? prev.hour : 0;
  const day = sameDay ? prev.day : 0;
  if (limits.hour !== null && hour >= limits.hour) return { verdict: "hour", next: null };
  if (limits.day !== null && day >= limits.day) return { verdict: "day", next: null };
  return {
    verdict: "ok",
    next: {
      hourStart: sameHour ? prev.hourStart : hourStart,
      hour: hour + 1,
      dayStart: sameDay ? prev.dayStart : dayStart,
      day: day + 1,
    },
  };
}
