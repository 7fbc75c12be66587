/** Every endpoint of §4 (and the operator API) in one table. */
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
import type { Route, RouteContext } from "./router.ts";
import { fetchHandler } from "../web/fetch_handler.ts";
import { searchHandler } from "../web/search_handler.ts";

export type Handler = (app: App, ctx: RouteContext) => Response | Promise<Response>;

const only = (family: Family | undefined) => family ? { onlyFamily: family } : {};
const surface = (s: SurfaceRoute["surface"], family: Family | undefined): Handler => (app, ctx) =>
  generate(app, ctx, { surface: s, ...only(family) });
const counting = (family: Family | undefined): Handler => (app, ctx) =>
  countTokens(app, ctx, { surface: "anthropic", ...only(family) });

const r = (method: string, path: string, envelope: Envelope, handler: Handler): Route<Handler> => ({
  method,
  path,
  envelope,
  handler,
});

export const ROUTES: Route<Handler>[] = [
  // spec §4.1, §9: every family under /v1; theta also under its own prefix, which accepts only theta models.
  ...([["/v1", undefined], ["/theta/v1", "theta"]] as const).flatMap(([base, family]) => [
    r("POST", `${base}/messages`, "anthropic", surface("anthropic", family)),
    r("POST", `${base}/messages/count_tokens`, "anthropic", counting(family)),
    r("POST", `${base}/chat/completions`, "openai", surface("openai_chat", family)),
    r("POST", `${base}/responses`, "openai", surface("openai_responses", family)),
  ]),
  r("GET", "/v1/models", "openai", listModels),
  r("POST", "/v1/files", "detail", postFile),
  r("GET", "/v1/files", "detail", listFiles),
  r("GET", "/v1/files/:id", "detail", getFile),
  r("DELETE", "/v1/files/:id", "detail", deleteFile),
  r("GET", "/v1/files/:id/content", "detail", getFileContent),
  r("POST", "/v1/alpha/search", "openai", searchHandler),
  r("POST", "/v1/alpha/fetch", "openai", fetchHandler),
  r("GET", "/v1/usage", "detail", getUsage),
  r("GET", "/v1/usage/requests", "detail", getUsageRequests),
  r("POST", "/admin/keys", "openai", adminCreateKey),
  r("GET", "/admin/keys/:id", "openai", adminGetKey),
  r("POST", "/admin/keys/:id/:action", "openai", adminKeyAction),
  r("GET", "/admin/tariff", "openai", adminGetTariff),
  r("GET", "/admin/ledger", "openai", adminLedger),
  r("POST", "/admin/tariff", "openai", adminSetTariff),
];
