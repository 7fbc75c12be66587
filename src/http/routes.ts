/** Every endpoint of spec §4 (and the operator API) in one table, each with who may call it. */
import { adminCreateKey, adminGetKey, adminKeyAction, adminLedger } from "../admin/api.ts";
import { adminGetTariff, adminSetTariff } from "../admin/tariff_api.ts";
import type { App } from "../app.ts";
import { listModels } from "../engine/list_models.ts";
import type { Family } from "../catalog/models.ts";
import { countTokens } from "../engine/count_tokens.ts";
import { generate, type SurfaceRoute } from "../engine/generate.ts";
import { deleteFile, getFile, getFileContent, listFiles, postFile } from "../files/handlers.ts";
import type { Envelope } from "../errors/render.ts";
import { getUsage, getUsageRequests } from "../usage/handlers.ts";
import type { KeyContext, RouteContext } from "../request/context.ts";
import type { Route } from "./router.ts";
import { fetchHandler } from "../web/fetch_handler.ts";
import { searchHandler } from "../web/search_handler.ts";

export type Handler = (app: App, ctx: RouteContext) => Response | Promise<Response>;
/** A handler of a key route: the server has authenticated the key before calling it (server.ts). */
type KeyHandler = (app: App, ctx: KeyContext) => Response | Promise<Response>;

const only = (family: Family | undefined) => family ? { onlyFamily: family } : {};
const surface = (s: SurfaceRoute["surface"], family: Family | undefined): KeyHandler => (app, ctx) =>
  generate(app, ctx, { surface: s, ...only(family) });
const counting = (family: Family | undefined): KeyHandler => (app, ctx) =>
  countTokens(app, ctx, { surface: "anthropic", ...only(family) });

/** A key route: its envelope renders every error, authentication included (spec §7.1). */
const key = (method: string, path: string, envelope: Envelope, handler: KeyHandler): Route<Handler> => ({
  method,
  path,
  envelope,
  auth: "key",
  handler: handler as Handler, // the server sets ctx.account on every "key" route before the call
});
const admin = (method: string, path: string, handler: Handler): Route<Handler> => ({
  method,
  path,
  envelope: "openai",
  auth: "admin",
  handler,
});

export const ROUTES: Route<Handler>[] = [
  // spec §4.1, §9: every family under /v1; theta also under its own prefix, which accepts only theta models.
  ...([["/v1", undefined], ["/theta/v1", "theta"]] as const).flatMap(([base, family]) => [
    key("POST", `${base}/messages`, "anthropic", surface("anthropic", family)),
    key("POST", `${base}/messages/count_tokens`, "anthropic", counting(family)),
    key("POST", `${base}/chat/completions`, "openai", surface("openai_chat", family)),
    key("POST", `${base}/responses`, "openai", surface("openai_responses", family)),
  ]),
  key("GET", "/v1/models", "openai", listModels),
  key("POST", "/v1/files", "detail", postFile),
  key("GET", "/v1/files", "detail", listFiles),
  key("GET", "/v1/files/:id", "detail", getFile),
  key("DELETE", "/v1/files/:id", "detail", deleteFile),
  key("GET", "/v1/files/:id/content", "detail", getFileContent),
  key("POST", "/v1/alpha/search", "openai", searchHandler),
  key("POST", "/v1/alpha/fetch", "openai", fetchHandler),
  key("GET", "/v1/usage", "detail", getUsage),
  key("GET", "/v1/usage/requests", "detail", getUsageRequests),
  admin("POST", "/admin/keys", adminCreateKey),
  admin("GET", "/admin/keys/:id", adminGetKey),
  admin("POST", "/admin/keys/:id/:action", adminKeyAction),
  admin("GET", "/admin/tariff", adminGetTariff),
  admin("GET", "/admin/ledger", adminLedger),
  admin("POST", "/admin/tariff", adminSetTariff),
];
