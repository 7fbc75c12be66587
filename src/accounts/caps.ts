/**
 * The key's own caps (spec §5.5, §7.3, §7.5): hourly and daily spend and reserve caps over UTC calendar
 * windows (the clock hour and the UTC day). The Ledger checks them in the same atomic step as the hold
 * (ledger.ts); a cap is refused when this request's reserve would cross it, with Retry-After = seconds to
 * the window end.
 */
import type { ErrorCode } from "../errors/codes.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import { DAY, HOUR, type WindowCounters } from "./windows.ts";
import type { Caps } from "../store/types.ts";

export type CapName =
  | "hourly_reserve_limit"
  | "daily_reserve_limit"
  | "hourly_spend_limit"
  | "daily_spend_limit";
/** The family's code for each cap (its policy's `codes.caps`). */
export type CapCodes = Readonly<Record<CapName, ErrorCode>>;

/** Throws the first cap this reserve would cross, in the order reserve caps then spend caps. */
export function checkCaps(
  caps: Caps,
  c: WindowCounters,
  reserve: bigint,
  codes: CapCodes,
  now: number,
): void {
  const hourLeft = Math.ceil((c.hourStart + HOUR - now) / 1000);
  const dayLeft = Math.ceil((c.dayStart + DAY - now) / 1000);
  const over = (cap: bigint | null, used: bigint) => cap !== null && used + reserve > cap;
  if (over(caps.hourlyReserve, c.hourReserved)) {
    throw new GatewayError(codes.hourly_reserve_limit, { retryAfter: hourLeft });
  }
  if (over(caps.dailyReserve, c.dayReserved)) {
    throw new GatewayError(codes.daily_reserve_limit, { retryAfter: dayLeft });
  }
  if (over(caps.hourlySpend, c.hourSpent + c.open)) {
    throw new GatewayError(codes.hourly_spend_limit, { retryAfter: hourLeft });
  }
  if (over(caps.dailySpend, c.daySpent + c.open)) {
    throw new GatewayError(codes.daily_spend_limit, { retryAfter: dayLeft });
  }
}
