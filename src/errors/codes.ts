/**
 * Every error code the gateway can emit (spec §7.3–spec §7.6), as one table of data: the only place where a
 * status, an error class, a Russian message and a Russian next step are attached to a code. The rows
 * live in one file per spec section and are merged here.
 */
import { ALPHA_CODES } from "./codes_alpha.ts";
import { BOT_CODES } from "./codes_bot.ts";
import { COMMON_CODES } from "./codes_common.ts";
import { DASHBOARD_CODES } from "./codes_dashboard.ts";
import { DELTA_CODES } from "./codes_delta.ts";
import { SHOP_CODES } from "./codes_shop.ts";
import { THETA_CODES } from "./codes_theta.ts";
import type { ErrorSpec } from "./error_spec.ts";

export type { ErrorClass, ErrorSpec } from "./error_spec.ts";

export const ERROR_CODES = {
  ...COMMON_CODES,
  ...ALPHA_CODES,
  ...DELTA_CODES,
  ...THETA_CODES,
  ...DASHBOARD_CODES,
  ...SHOP_CODES,
  ...BOT_CODES,
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function errorSpec(code: ErrorCode): ErrorSpec {
  return ERROR_CODES[code];
}
