/** Telemetry settings: logs; /metrics, /healthz and /readyz need no setting of their own. */
import { z } from "zod";
import { LOG_LEVELS } from "../../util/log.ts";

export const telemetry = {
  LOG_LEVEL: z.enum(LOG_LEVELS).default("info").describe(
    "JSON log lines on stdout below this level are dropped; request lines are `info`, failures " +
      "`error`. Default `info`.",
  ),
};
