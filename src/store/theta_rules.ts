/**
 * What both stores share of the theta capabilities (store.ts updateThetaPool, countRequest): the pool
 * document's encoding and size limit, and the rule of a key's request count over the UTC hour and day.
 */
import { windowStarts } from "./shared_window.ts";
import type { ThetaPoolDoc } from "./types.ts";

/** The pool document's largest size as JSON (store.ts); a Deno KV value holds at most 64 KiB. */
export const MAX_THETA_POOL_BYTES = 60_000;

const encoder = new TextEncoder();

/** The document as UTF-8 JSON, refused above MAX_THETA_POOL_BYTES. Bytes, not a JS string: a KV value
 *  stores a string with any non-Latin-1 character as UTF-16, up to twice the JSON's size. */
export function encodeThetaPool(doc: ThetaPoolDoc): Uint8Array {
  const bytes = encoder.encode(JSON.stringify(doc));
  if (bytes.byteLength > MAX_THETA_POOL_BYTES) {
    throw new RangeError(
      `theta pool document of ${bytes.byteLength} bytes (at most ${MAX_THETA_POOL_BYTES})`,
    );
  }
  return bytes;
}

export function decodeThetaPool(bytes: Uint8Array): ThetaPoolDoc {
  return JSON.parse(new TextDecoder().decode(bytes)) as ThetaPoolDoc;
}

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
