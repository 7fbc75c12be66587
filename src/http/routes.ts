/** Every endpoint of spec §4 (and the operator API) in one table, each with who may call it. */
import { adminCreateKey, adminGetKey, adminKeyAction, adminLedger } from "../admin/api.ts";
import { adminBackup } from "../admin/backup_api.ts";
import {
  adminConfirmPayment,
  adminCreatePackage,
  adminFindKeys,
  adminKeyLedger,
  adminListMethods,
  adminListPackages,
  adminListPayments,
  adminRefundPayment,
  adminUpdateMethod,
  adminUpdatePackage,
} from "../admin/shop_api.ts";
import { adminGetTariff, adminSetTariff } from "../admin/tariff_api.ts";
import { healthz, readyz } from "../admin/health.ts";
import { metricsHandler } from "../admin/metrics.ts";
import type { App } from "../app.ts";
import { TELEGRAM_WEBHOOK_PATH, telegramWebhook } from "../bot/webhook_route.ts";
import { listModels } from "../engine/list_models.ts";
import type { Family } from "../catalog/models.ts";
import { countTokens } from "../engine/count_tokens.ts";
import { dashboardAsset } from "../dashboard/assets.ts";
import { home, setTheta } from "../dashboard/overview.ts";
import { requestsPage } from "../dashboard/requests_page.ts";
import { login, logout } from "../dashboard/sign_in.ts";
import { usagePage } from "../dashboard/usage_page.ts";
import type { SurfaceRoute } from "../engine/generate.ts";
import { generateOnce } from "../engine/idempotent.ts";
import { deleteFile, getFile, getFileContent, listFiles, postFile } from "../files/handlers.ts";
import type { Envelope } from "../errors/render.ts";
import { getUsage, getUsageRequests } from "../usage/handlers.ts";
import type { KeyContext, RouteContext, SessionContext } from "../request/context.ts";
import type { Route } from "./router.ts";
import { fetchHandler } from "../web/fetch_handler.ts";
import { searchHandler } from "../web/search_handler.ts";

export type Handler = (app: App, ctx: RouteContext) => Response | Promise<Response>;
/** A handler of a key route: the server has authenticated the key before calling it (server.ts). */
type KeyHandler = (app: App, ctx: KeyContext) => Response | Promise<Response>;
/** A handler of a dashboard route: the server has read the session cookie before calling it (server.ts). */
type SessionHandler = (app: App, ctx: SessionContext) => Response | Promise<Response>;

const only = (family: Family | undefined) => family ? { onlyFamily: family } : {};
const surface = (s: SurfaceRoute["surface"], family: Family | undefined): KeyHandler => (app, ctx) =>
  generateOnce(app, ctx, { surface: s, ...only(family) });
const counting = (family: Family | undefined): KeyHandler => (app, ctx) =>
  countTokens(app, ctx, { surface: "anthropic", ...only(family) });

/**
 * A key route: its envelope renders every error, authentication included (spec §7.1); `label` is the
 * surface its requests are counted and logged under.
 */
const key = (
  method: string,
  path: string,
  envelope: Envelope,
  label: string,
  handler: KeyHandler,
): Route<Handler> => ({
  method,
  path,
  envelope,
  auth: "key",
  handler: handler as Handler, // the server sets ctx.account on every "key" route before the call
  label,
});
const admin = (method: string, path: string, handler: Handler): Route<Handler> => ({
  method,
  path,
  envelope: "openai",
  auth: "admin",
  handler,
  label: "admin",
});
/**
 * The key holder's dashboard (src/dashboard/): HTML pages, signed in by the `gw_session` cookie
 * (never a key header); counted and logged under surface `dashboard`.
 */
const dashboard = (method: string, path: string, handler: SessionHandler): Route<Handler> => ({
  method,
  path,
  envelope: "html",
  auth: "session",
  handler: handler as Handler, // the server sets ctx.session, ctx.client and ctx.https on every "session" route
  label: "dashboard",
});
/** The operator's probes: no label, so neither counted nor logged; no key, so no request rate. */
const probe = (path: string, auth: "none" | "admin", handler: Handler): Route<Handler> => ({
  method: "GET",
  path,
  envelope: "openai",
  auth,
  handler,
});

export const ROUTES: Route<Handler>[] = [
  // spec §4.1, §9: every family under /v1; theta also under its own prefix, which accepts only theta models.
  ...([["/v1", undefined], ["/theta/v1", "theta"]] as const).flatMap(([base, family]) => [
    key("POST", `${base}/messages`, "anthropic", "anthropic", surface("anthropic", family)),
    key("POST", `${base}/messages/count_tokens`, "anthropic", "count_tokens", counting(family)),
    key("POST", `${base}/chat/completions`, "openai", "openai_chat", surface("openai_chat", family)),
    key("POST", `${base}/responses`, "openai", "openai_responses", surface("openai_responses", family)),
  ]),
  key("GET", "/v1/models", "openai", "models", listModels),
  key("POST", "/v1/files", "detail", "files", postFile),
  key("GET", "/v1/files", "detail", "files", listFiles),
  key("GET", "/v1/files/:id", "detail", "files", getFile),
  key("DELETE", "/v1/files/:id", "detail", "files", deleteFile),
  key("GET", "/v1/files/:id/content", "detail", "files", getFileContent),
  key("POST", "/v1/alpha/search", "openai", "search", searchHandler),
  key("POST", "/v1/alpha/fetch", "openai", "fetch", fetchHandler),
  key("GET", "/v1/usage", "detail", "usage", getUsage),
  key("GET", "/v1/usage/requests", "detail", "usage", getUsageRequests),
  admin("POST", "/admin/keys", adminCreateKey),
  admin("GET", "/admin/keys/:id", adminGetKey),
  admin("POST", "/admin/keys/:id/:action", adminKeyAction),
  // The key shop: src/admin/shop_api.ts.
  admin("GET", "/admin/keys", adminFindKeys),
  admin("GET", "/admin/keys/:id/ledger", adminKeyLedger),
  admin("GET", "/admin/packages", adminListPackages),
  admin("POST", "/admin/packages", adminCreatePackage),
  admin("PATCH", "/admin/packages/:id", adminUpdatePackage),
  admin("GET", "/admin/payment-methods", adminListMethods),
  admin("POST", "/admin/payment-methods/:id", adminUpdateMethod),
  admin("GET", "/admin/payments", adminListPayments),
  admin("POST", "/admin/payments/:id/confirm", adminConfirmPayment),
  admin("POST", "/admin/payments/:id/refund", adminRefundPayment),
  admin("GET", "/admin/tariff", adminGetTariff),
  admin("GET", "/admin/ledger", adminLedger),
  admin("POST", "/admin/tariff", adminSetTariff),
  admin("GET", "/admin/backup", adminBackup),
  dashboard("GET", "/dashboard", home),
  dashboard("POST", "/dashboard/login", login),
  dashboard("POST", "/dashboard/logout", logout),
  dashboard("GET", "/dashboard/usage", usagePage),
  dashboard("GET", "/dashboard/requests", requestsPage),
  dashboard("POST", "/dashboard/theta", setTheta),
  // Its stylesheet and script: anyone may load them (the sign-in form uses them too).
  {
    method: "GET",
    path: "/dashboard/assets/:name",
    envelope: "html",
    auth: "none",
    handler: dashboardAsset,
    label: "dashboard",
  },
  // The key shop bot's webhook: Telegram's secret header is its authentication (src/bot/).
  {
    method: "POST",
    path: TELEGRAM_WEBHOOK_PATH,
    envelope: "openai",
    auth: "none",
    handler: telegramWebhook,
    label: "telegram",
  },
  // docs/operator-guide.md "Operating": liveness, readiness, and the metrics behind the admin token.
  probe("/healthz", "none", healthz),
  probe("/readyz", "none", readyz),
  probe("/metrics", "admin", metricsHandler),
];
