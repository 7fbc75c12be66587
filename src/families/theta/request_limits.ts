/**
 * The key's own theta request limits (spec §7.6 `customer_hour_limit`, `customer_day_limit`;
 * docs/families/theta.md): at most `hourlyRequests` theta requests per UTC clock hour and `dailyRequests` per
 * UTC day of the key's theta settings (key_settings.ts; null: no limit). Counted at admission, after every local rule and before the hold (the policy's
 * `admitRequest`), in one atomic step across processes (Store.countRequest): a request at a full window is
 * refused with Retry-After = seconds until that window ends and is not counted; an admitted one counts in both
 * windows whatever happens to it next. Every theta request is counted, limited or not, so a limit set during
 * a window applies to what the window already served.
 */
import { GatewayError } from "../../errors/gateway_error.ts";
import { DAY, HOUR, windowStarts } from "../../store/shared_window.ts";
import type { RequestAdmission } from "../policy.ts";
import { thetaSettings } from "./key_settings.ts";

/** The store's counter of theta requests (Store.countRequest). */
export const THETA_COUNTER = "theta";

export async function admitThetaRequest(a: RequestAdmission): Promise<undefined> {
  const { hourlyRequests: hour, dailyRequests: day } = thetaSettings(a.key);
  const id = a.key.id;
  const now = a.now();
  const verdict = await a.store.countRequest(id, THETA_COUNTER, now, { hour, day });
  if (verdict === "ok") return undefined;
  const { hourStart, dayStart } = windowStarts(now);
  const seconds = (end: number) => Math.ceil((end - now) / 1000);
  if (verdict === "hour") {
    throw new GatewayError("customer_hour_limit", {
      retryAfter: seconds(hourStart + HOUR),
      detail: `Лимит ключа: ${hour} запросов theta в час (UTC).`,
    });
  }
  throw new GatewayError("customer_day_limit", {
    retryAfter: seconds(dayStart + DAY),
    detail: `Лимит ключа: ${day} запросов theta в сутки (UTC).`,
  });
}
