/**
 * Low-balance alerts: every BOT_ALERT_CHECK_MS the shop hands over the keys whose balance fell
 * below their threshold since their last alert (each once per crossing, marked atomically so two processes
 * never both send), and each goes to its key's chat with a button to buy more.
 */
import { type Api, InlineKeyboard } from "grammy";
import type { App } from "../app.ts";
import type { DueAlert } from "../shop/mod.ts";
import { apiSignal, pause } from "./backoff.ts";
import { encodeCallback } from "./callback_data.ts";
import { failure } from "./failure.ts";
import { T, usd } from "./texts.ts";

export function alertText(a: DueAlert): string {
  return `Баланс ключа ${a.hint} опустился ниже ${usd(a.threshold)}: осталось ${usd(a.balance)}. ` +
    "Пополните его, чтобы запросы не остановились.";
}

/** Runs until `signal` aborts. A failed check or send is logged; the next check goes on. */
export async function alertLoop(app: App, api: Api, signal: AbortSignal): Promise<void> {
  const buy = new InlineKeyboard().text(T.buyButton, encodeCallback({ a: "buy" }));
  while (!signal.aborted) {
    await pause(app.config.BOT_ALERT_CHECK_MS, signal);
    if (signal.aborted) return;
    let due: DueAlert[];
    try {
      due = await app.shop.dueAlerts(app.now());
    } catch (err) {
      app.log.warn("telegram: alert check failed", failure(err));
      continue;
    }
    for (const a of due) {
      try {
        await api.sendMessage(a.chatId, alertText(a), { reply_markup: buy }, apiSignal(signal));
      } catch (err) {
        if (!signal.aborted) app.log.warn("telegram: alert not sent", { key_id: a.keyId, ...failure(err) });
      }
    }
  }
}
