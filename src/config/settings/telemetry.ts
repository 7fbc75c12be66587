/** Telemetry settings: logs; /metrics, /healthz and /readyz need no setting of their own. */
import { z } from "zod";
import { LOG_LEVELS } from "../../util/log.ts";

export const telemetry = {
  LOG_LEVEL: z.enum(LOG_LEVELS).default("info").describe(
    "JSON log lines on stdout below this level are dropped; request lines are `info`, failures " +
      "`error`. Default `info`.",
  ),
  LOG_OK_GENERATIONS: z.enum(["on", "off"]).default("off").describe(
    "`on`: a generation that ended well (HTTP 200, its usage settled `ok`, nothing written off, no error " +
      "frame) writes its `request` line too. `off`: its usage row is its record (the dashboard's Requests, the " +
      "usage reports), and every other request still writes its line: refusals, errors, cancelled or cut " +
      "streams, and the routes that bill nothing. Default `off`.",
  ),
};
