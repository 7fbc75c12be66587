/**
 * POST /telegram/<hook> (webhook mode): an update from Telegram, on the gateway's own server. Any other hook
 * is no route at all (404); a wrong or missing X-Telegram-Bot-Api-Secret-Token is refused (401
 * telegram_secret_mismatch) before the body is read, both compared in constant time. The route's logged path
 * is the pattern, never the hook.
 */
import { timingSafeEqual } from "../accounts/api_key.ts";
import type { App } from "../app.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import { readJsonObject } from "../request/body.ts";
import type { RouteContext } from "../request/context.ts";

export const TELEGRAM_WEBHOOK_PATH = "/telegram/:hook";
/** An update is a few kilobytes; Telegram's largest (a long message with entities) stays far below this. */
const MAX_UPDATE_BYTES = 1024 * 1024;

export async function telegramWebhook(app: App, ctx: RouteContext): Promise<Response> {
  const webhook = app.telegramWebhook;
  const secret = app.config.TELEGRAM_WEBHOOK_SECRET;
  if (!webhook || !secret || !timingSafeEqual(ctx.params.hook ?? "", webhook.hook)) {
    throw new GatewayError("route_not_found");
  }
  const sent = ctx.req.headers.get("x-telegram-bot-api-secret-token");
  if (sent === null || !timingSafeEqual(sent, secret)) throw new GatewayError("telegram_secret_mismatch");
  const update = await readJsonObject(ctx.req, MAX_UPDATE_BYTES);
  if (!Number.isSafeInteger(update.update_id)) {
    throw new GatewayError("invalid_request", { param: "update_id" });
  }
  // Not recorded (the store is down): 503, and Telegram sends the update again later.
  if (!(await webhook.receive(update))) throw new GatewayError("service_unavailable", { retryAfter: 1 });
  return new Response(null, { status: 200 });
}
