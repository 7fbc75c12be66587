/** `GET /metrics` (docs/operator-guide.md "Operating"): Prometheus text, behind the admin token (routes.ts). */
import type { App } from "../app.ts";
import type { RouteContext } from "../request/context.ts";
import { EXPOSITION_CONTENT_TYPE } from "../util/prometheus.ts";

export function metricsHandler(app: App, ctx: RouteContext): Response {
  return new Response(app.metrics.render(), {
    headers: {
      "content-type": EXPOSITION_CONTENT_TYPE,
      "cache-control": "no-store",
      "request-id": ctx.requestId,
    },
  });
}
