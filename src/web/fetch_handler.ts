/** POST /v1/alpha/fetch (spec §2.4, §4.4, §8.3): free of charge, 402 at zero credit, no model, no stream. */
import type { App } from "../app.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import { jsonResponse } from "../request/json.ts";
import type { KeyContext } from "../request/context.ts";
import { fetchPage, PRODUCTION_FETCH } from "./fetch_service.ts";
import { readSingleField } from "./strict_body.ts";

export async function fetchHandler(app: App, ctx: KeyContext): Promise<Response> {
  if (app.accounts.available(ctx.account) <= 0n) throw new GatewayError("insufficient_credit");
  const url = await readSingleField(ctx.req, "url");
  // Always the production guard: system DNS, public addresses only, ports 80/443, system TLS roots.
  const result = await fetchPage(url, { ...PRODUCTION_FETCH, documents: app.documents });
  return jsonResponse(200, result, ctx.requestId, ctx.headers);
}
