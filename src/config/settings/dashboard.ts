/** Dashboard settings: the key holder's dashboard at /dashboard. */
import { z } from "zod";
import { ms } from "./fields.ts";

export const dashboard = {
  DASHBOARD_SESSION_TTL_MS: ms(43_200_000).describe(
    "How long a dashboard sign-in lasts, ms; sign-out ends it at once on every process. Default 12 " +
      "h.",
  ),
  DASHBOARD_LOGIN_FAILURES_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(10).describe(
    "Failed dashboard sign-ins allowed per minute per client address, per process: a burst of that " +
      "many, then one more every 60/N s; beyond, 429 `dashboard_login_rate_limit` with Retry-After. " +
      "Default 10.",
  ),
};
