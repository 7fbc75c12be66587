/**
 * The grammY bot: its Bot API client (TELEGRAM_API_ROOT, bounded calls, failures logged without the token)
 * and its middleware — each update once (dedupe.ts), then failures turned into a Russian reply and a log
 * line, then the flows (dispatch.ts).
 */
import { Bot, type Context } from "grammy";
import type { App } from "../app.ts";
import { failure } from "./failure.ts";
import { onceEach } from "./dedupe.ts";
import { dispatch } from "./dispatch.ts";
import { T } from "./texts.ts";

/**
 * One Bot API call's bound. Long polling asks Telegram to hold getUpdates for POLL_SECONDS, so the bound
 * is above that; a Telegram that accepts connections and never answers costs a handler at most this long.
 */
export const POLL_SECONDS = 25;
const CALL_TIMEOUT_SECONDS = POLL_SECONDS + 10;

export function buildBot(app: App, token: string): Bot {
  const bot = new Bot<Context>(token, {
    client: { apiRoot: app.config.TELEGRAM_API_ROOT, timeoutSeconds: CALL_TIMEOUT_SECONDS },
  });
  bot.api.config.use(async (prev, method, payload, signal) => {
    try {
      return await prev(method, payload, signal);
    } catch (err) {
      if (!signal?.aborted) app.log.warn("telegram: call failed", { method, ...failure(err) });
      throw err;
    }
  });
  bot.use(onceEach(app.shop, app.now));
  bot.use(async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      app.log.error("telegram: update failed", { update_id: ctx.update.update_id, ...failure(err) });
      if (ctx.chat?.type === "private") await ctx.reply(T.failed).catch(() => {});
    }
  });
  bot.use(dispatch(app));
  return bot;
}
