/** The HTTP layer: request id, routing, and the one place errors become responses. */
import { asGatewayError } from "../request/as_gateway_error.ts";
import { type App, SIMULATED_HEADER, WORKER_HEADER } from "../app.ts";
import { requireAdmin } from "../auth/admin_token.ts";
import { authenticate } from "../auth/authenticate.ts";
import { SuspensionRule } from "../auth/suspension_rule.ts";
import type { Account } from "../accounts/accounts.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import type { KeyContext, RouteContext, SessionContext } from "../request/context.ts";
import { carriesRequestHeaders } from "../request/answer_headers.ts";
import { DASHBOARD_HEADERS, isDashboardPath } from "../dashboard/security_headers.ts";
import { type Envelope, errorResponse } from "../errors/render.ts";
import { RequestTrace } from "../telemetry/request_trace.ts";
import { ClientAddresses } from "./client_address.ts";
import { requestLimits } from "./rate_limits.ts";
import { checkHeadSize, checkHost } from "./request_head.ts";
import { admitSession } from "./session_stage.ts";
import { shuttingDown } from "./shutdown.ts";
import { mergeSlashes, Router } from "./router.ts";
import { type Handler, ROUTES } from "./routes.ts";
import type { GatewayHandler } from "./serve.ts";

export function createHandler(app: App): GatewayHandler {
  const routes = app.config.ADMIN_TOKEN ? ROUTES : ROUTES.filter((r) => !r.path.startsWith("/admin/"));
  const router = new Router<Handler>(routes);
  // On every answer: which serving process wrote it, and whether the simulator stood in for the upstreams.
  const fixedHeaders: Record<string, string> = {
    [WORKER_HEADER]: String(app.worker),
    ...(app.simulated ? { [SIMULATED_HEADER]: "true" } : {}),
  };
  const fixed = Object.entries(fixedHeaders);
  const limits = requestLimits(app.config);
  const suspensions = new SuspensionRule(app.config, app.accounts, app.log);
  const addresses = new ClientAddresses(app.config.TRUSTED_PROXIES);

  return async (req, conn, completed) => {
    const requestId = app.newId("req_");
    const url = new URL(req.url);
    const path = mergeSlashes(url.pathname);
    const m = router.match(req.method, path);
    const route = m.kind === "found" ? m.route : undefined;
    // Counted once it ends, logged once its answer is written (src/telemetry/); an unrouted request under
    // surface "none".
    const trace = new RequestTrace(app, requestId, route ? route.label : "none", route?.path, completed);
    // Every answer under /dashboard, routed or not, is a page for a person with the dashboard's headers.
    const dashboard = isDashboardPath(path);
    const envelope: Envelope = m.kind === "found"
      ? m.route.envelope
      : m.kind === "method_not_allowed"
      ? m.envelope
      : dashboard
      ? "html"
      : path.includes("/messages")
      ? "anthropic"
      : "openai";
    const headers: Record<string, string> = dashboard
      ? { ...fixedHeaders, ...DASHBOARD_HEADERS }
      : { ...fixedHeaders };
    let keyed: Account | undefined;
    let leave: (() => void) | undefined;
    try {
      // The head first: before routing and authentication (docs/api.md "Errors", HTTP level).
      checkHost(req, url, conn.fallbackHost);
      checkHeadSize(req, url);
      if (path !== url.pathname) url.pathname = path; // handlers and the usage row see the merged path
      if (m.kind === "not_found") throw new GatewayError("route_not_found");
      if (m.kind === "method_not_allowed") {
        throw new GatewayError("method_not_allowed", { headers: { allow: m.allow.join(", ") } });
      }
      const ctx: RouteContext = { req, url, requestId, params: m.params, envelope, headers, trace };
      // The authentication stage, per route (handlers never authenticate themselves), with the gateway's
      // own request rates around it: the client's address before the key is looked at, the key after.
      if (m.route.auth === "key") {
        // A draining gateway takes no new API request (src/http/shutdown.ts); admin and health still answer.
        if (app.draining) throw shuttingDown();
        leave = app.inflight.enter();
        limits.admitAddress(req.headers, conn.peer, app.now());
        const account = await authenticate(req.headers, app.accounts, app.now());
        trace.authenticated(account.rec.id);
        limits.admitKey(account.rec.id, app.now());
        (ctx as KeyContext).account = keyed = account;
      } else if (m.route.auth === "session") {
        await admitSession(app, addresses, ctx as SessionContext, conn.peer);
      } else if (m.route.auth === "admin") requireAdmin(app.config.ADMIN_TOKEN, req.headers);
      const res = await m.route.handler(app, ctx);
      if (!carriesRequestHeaders(res)) { for (const [name, value] of fixed) res.headers.set(name, value); }
      if (!trace.deferred) trace.end(res.status); // a stream ends with its pipeline
      return res;
    } catch (err) {
      if (!(err instanceof GatewayError)) {
        app.log.error("request failed", {
          request_id: requestId,
          error: err instanceof Error ? err.stack ?? err.name : typeof err,
        });
      }
      const gerr = asGatewayError(err);
      trace.end(gerr.status, gerr.code);
      if (keyed) await suspensions.refused(keyed, gerr.code, app.now()); // the automatic suspension rule
      // Drain an unread body so the connection can be reused (bounded: we only cancel).
      if (req.body && !req.bodyUsed) req.body.cancel().catch(() => {});
      return errorResponse(gerr, envelope, requestId, headers);
    } finally {
      leave?.(); // an open stream stays counted through its hold (generate.ts)
    }
  };
}
