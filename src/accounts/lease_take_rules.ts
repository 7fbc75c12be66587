/**
 * What a take of a key's credit lease decides from the store's view (lease_ledger.ts, docs/ledger_leases.md):
 * pure rules, run inside the store's atomic step (which may run them again after a conflict).
 */
import { GatewayError } from "../errors/gateway_error.ts";
import type { Caps, LeaseDecision, LeaseView } from "../store/types.ts";
import { type CapCodes, checkCaps } from "./caps.ts";

/** A slice takes room for this many holds like the one that asked, or 1/SLICE_SHARE of the key's available
 *  credit if that is more; at most half of it. */
const SLICE_HOLDS = 8n;
const SLICE_SHARE = 16n;

export const isCapped = (c: Caps) =>
  c.hourlySpend !== null || c.dailySpend !== null || c.hourlyReserve !== null || c.dailyReserve !== null;

/** A take that wrote nothing: the caps it read call for the other kind of take. */
export const NOTHING: LeaseDecision = { grant: 0n, reserved: 0n };

/** Credit a take may grant: the key's credit no lease holds. */
export function freeIn(v: LeaseView): bigint {
  const free = v.credited - v.spent - v.leased;
  return free > 0n ? free : 0n;
}

/**
 * What to take for a hold that misses `need`: room for SLICE_HOLDS like it or a SLICE_SHARE of what is free,
 * whichever is more (fewer takes in steady state, and room for a charge beyond its hold), but at most half of
 * what is free (so other processes still find credit), and never less than the need; 0 if `free` cannot
 * cover it.
 */
export function slice(need: bigint, free: bigint): bigint {
  if (need <= 0n) need = 1n;
  if (free < need) return 0n;
  let want = need * SLICE_HOLDS;
  if (want < free / SLICE_SHARE) want = free / SLICE_SHARE;
  if (want > free / 2n) want = free / 2n;
  return want > need ? want : need;
}

/**
 * A capped key's hold decided against the store's view: credit, then the caps as stored over the shared
 * windows, whose open holds are every process's live leases of the key. A process that knows the key is
 * capped holds in its lease only its open holds (and, until the group commit carries them, the rests of its
 * settlements), so that is what is counted; one that has not learned the cap yet is counted with its whole
 * lease. Throws the refusal (nothing is written then).
 */
export function capped(
  v: LeaseView,
  caps: Caps,
  amount: bigint,
  codes: CapCodes,
  now: number,
): LeaseDecision {
  const free = freeIn(v);
  if (free <= 0n) throw new GatewayError("insufficient_credit");
  if (free < amount) throw new GatewayError("request_reserve_exceeds_credit");
  const w = v.window;
  checkCaps(
    caps,
    {
      hourStart: w.hourStart,
      dayStart: w.dayStart,
      hourSpent: w.hourSpent,
      daySpent: w.daySpent,
      hourReserved: w.hourReserved,
      dayReserved: w.dayReserved,
      open: v.leased,
    },
    amount,
    codes,
    now,
  );
  return { grant: amount, reserved: amount };
}
