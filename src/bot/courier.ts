/**
 * What the bot does for the shop when an operator acts outside the chat (the admin API, the CLI through the
 * gateway) — and for its own admin commands: Stars returned with Telegram's refundStarPayment, and the
 * buyer's chat told. Set on the process's Shop while the bot runs (Shop.courier).
 */
import type { Api } from "grammy";
import type { App } from "../app.ts";
import type { ShopCourier } from "../shop/mod.ts";
import { announceSettlement } from "./flows/payments.ts";

export function shopCourier(app: App, api: Api): ShopCourier {
  return {
    announceSettlement: (r) => announceSettlement(app, api, r),
    async refundStars(p) {
      await api.refundStarPayment(p.chatId, p.telegramChargeId!);
    },
    async announceRefund(p) {
      await api.sendMessage(p.chatId, `Платёж ${p.id} возвращён оператором.`);
    },
  };
}
