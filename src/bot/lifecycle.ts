/**
 * The bot's life beside the gateway: built when TELEGRAM_BOT_TOKEN is set; webhook mode when
 * TELEGRAM_WEBHOOK_SECRET is set (the route on the gateway's own server, webhook_route.ts), long polling
 * otherwise. Nothing here is awaited by the gateway's start-up or its API: getMe, setMyCommands, setWebhook
 * and polling run in the background, retried with backoff and logged while Telegram is unreachable, and all
 * of it stops with the gateway. With several serving processes (WORKERS) only the first sets the commands
 * and the webhook, polls and sends the alerts; every process takes webhook updates.
 */
import type { App } from "../app.ts";
import { alertLoop } from "./alert_loop.ts";
import { apiSignal, pause, retrying } from "./backoff.ts";
import { buildBot, POLL_SECONDS } from "./build.ts";
import { shopCourier } from "./courier.ts";
import { failure } from "./failure.ts";
import { COMMANDS } from "./texts.ts";
import { webhookHook, webhookReceiver } from "./webhook.ts";

/** The update types the bot handles (dispatch.ts); Telegram sends no others. */
const ALLOWED_UPDATES = ["message", "callback_query", "pre_checkout_query"] as const;
/** How long shutdown waits for the bot's calls in flight (polling's last offset confirmation included). */
const STOP_WAIT_MS = 3_000;

export interface RunningBot {
  mode: "webhook" | "polling";
  stop(): Promise<void>;
}

export async function startBot(app: App, token: string): Promise<RunningBot> {
  const bot = buildBot(app, token);
  const stopping = new AbortController();
  const signal = stopping.signal;
  const opts = { log: app.log, signal };
  const lead = app.worker === 1;
  const secret = app.config.TELEGRAM_WEBHOOK_SECRET;
  const tasks: Promise<unknown>[] = [];
  // The admin API's confirmations and refunds reach buyers (and Telegram's Stars) through this process's bot.
  app.shop.courier = shopCourier(app, bot.api);
  if (secret) {
    const hook = await webhookHook(secret);
    app.telegramWebhook = webhookReceiver(bot, hook, opts);
    tasks.push(retrying("getMe", () => bot.init(apiSignal(signal)), opts));
    if (lead) {
      const url = `${app.config.PUBLIC_BASE_URL!.replace(/\/+$/, "")}/telegram/${hook}`;
      tasks.push(
        retrying("setWebhook", () =>
          bot.api.setWebhook(
            url,
            { secret_token: secret, allowed_updates: [...ALLOWED_UPDATES] },
            apiSignal(signal),
          ), opts),
      );
    }
  } else if (lead) {
    // grammY's loop logs nothing and stops on a middleware error by default: both go to the gateway's log.
    bot.catch((err) =>
      app.log.error("telegram: update failed", { update_id: err.ctx.update.update_id, ...failure(err.error) })
    );
    tasks.push((async () => {
      // getMe first, under the shutdown's signal (bot.start's own getMe could not be cut short).
      if (!(await retrying("getMe", () => bot.init(apiSignal(signal)), opts))) return;
      // start() deletes any webhook, then polls until bot.stop(); a refusal (401, 409) is retried.
      await retrying(
        "polling",
        () => bot.start({ allowed_updates: [...ALLOWED_UPDATES], timeout: POLL_SECONDS }),
        opts,
      );
    })());
  }
  if (lead) {
    tasks.push(
      retrying("setMyCommands", () => bot.api.setMyCommands(COMMANDS, undefined, apiSignal(signal)), opts),
    );
    tasks.push(alertLoop(app, bot.api, signal));
  }
  app.log.info("telegram: bot started", { mode: secret ? "webhook" : "polling", worker: app.worker });
  return {
    mode: secret ? "webhook" : "polling",
    async stop() {
      stopping.abort();
      app.shop.courier = undefined;
      const polling = bot.isRunning() ? bot.stop().catch(() => {}) : undefined;
      const quiet = new AbortController();
      await Promise.race([Promise.allSettled([...tasks, polling]), pause(STOP_WAIT_MS, quiet.signal)]);
      quiet.abort();
    },
  };
}
