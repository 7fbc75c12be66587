/**
 * Webhook mode (TELEGRAM_WEBHOOK_SECRET set): Telegram posts each update to PUBLIC_BASE_URL/telegram/<hook>
 * on the gateway's own server (webhook_route.ts checks the secret header first). The update then goes
 * through grammY's webhookCallback, with an adapter for an update the route has already read and checked.
 */
import { type Bot, BotError, webhookCallback } from "grammy";
import type { Update } from "grammy/types";
import { hashKey } from "../accounts/api_key.ts";
import type { TelegramWebhook } from "../app.ts";
import type { Logger } from "../util/log.ts";
import { apiSignal, pause } from "./backoff.ts";
import { failure } from "./failure.ts";
import { UpdateNotRecorded } from "./dedupe.ts";

/** Hex digits of SHA-256(secret) in the path: unguessable without the secret, and not the secret itself. */
const HOOK_HEX = 32;
/** An update still being handled after this long is answered anyway (Telegram waits up to 60 s, then
 *  retries — which the update_id record would only drop). */
const HANDLE_TIMEOUT_MS = 9_000;
/** A first update that finds the bot not yet initialised (getMe) waits this long, then Telegram retries. */
const INIT_WAIT_MS = 5_000;

export async function webhookHook(secret: string): Promise<string> {
  return (await hashKey(secret)).slice(0, HOOK_HEX);
}

export function webhookReceiver(
  bot: Bot,
  hook: string,
  opts: { log: Logger; signal: AbortSignal },
): TelegramWebhook {
  const handle = webhookCallback(bot, (update: Update) => ({
    update,
    respond: () => {}, // no webhook replies: every answer goes out as its own Bot API call
    unauthorized: () => {}, // the route checked the secret already
  }), { onTimeout: "return", timeoutMilliseconds: HANDLE_TIMEOUT_MS });
  return {
    hook,
    async receive(update) {
      if (!bot.isInited()) {
        // The start-up's getMe is still retrying: Telegram keeps the update and sends it again.
        await Promise.race([
          bot.init(apiSignal(opts.signal)).catch(() => {}),
          pause(INIT_WAIT_MS, opts.signal),
        ]);
        if (!bot.isInited()) return false;
      }
      try {
        await handle(update as unknown as Update);
        return true;
      } catch (err) {
        if (err instanceof BotError && err.error instanceof UpdateNotRecorded) return false;
        opts.log.error("telegram: update failed", {
          update_id: update.update_id,
          ...failure(err instanceof BotError ? err.error : err),
        });
        return true;
      }
    },
  };
}
