/**
 * The operator's chat commands (chats in TELEGRAM_ADMIN_CHAT_IDS): the admin API's two payment
 * actions through the same shop operations — confirm a manual payment (Shop.confirmPayment), refund a payment
 * (Shop.refund: refused first when the key cannot cover it, then the Stars back through Telegram, then the
 * books) — and the payment-method switch. In other chats these commands are unknown: they get help.
 */
import type { Context } from "grammy";
import type { App } from "../../app.ts";
import { Msg } from "../message.ts";
import { failureText, say } from "../reply.ts";
import { ADMIN_HELP } from "../texts.ts";
import { announceSettlement } from "./payments.ts";

export function isAdminChat(app: App, chatId: number): boolean {
  return app.config.TELEGRAM_ADMIN_CHAT_IDS.includes(chatId);
}

/** The one argument of /confirm and /refund, or null (then the usage is shown). */
function paymentArg(ctx: Context): string | null {
  const arg = String(ctx.match ?? "").trim();
  return /^[A-Za-z0-9_-]{1,64}$/.test(arg) ? arg : null;
}

const OUTCOME = {
  credited: "зачислен",
  duplicate: "уже был зачислен",
  refund_due: "не зачислен: способ оплаты или пакет отключены, платёж ждёт возврата",
} as const;

export async function confirmCommand(app: App, ctx: Context): Promise<void> {
  const id = paymentArg(ctx);
  if (id === null) return await say(ctx, ADMIN_HELP);
  let result;
  try {
    result = await app.shop.confirmPayment(id, app.now());
  } catch (err) {
    return await say(ctx, `Платёж ${id} не подтверждён: ${failureText(err)}`);
  }
  await say(ctx, `Платёж ${id}: ${OUTCOME[result.outcome]}.`);
  if (result.outcome !== "duplicate") await announceSettlement(app, ctx.api, result);
}

export async function refundCommand(app: App, ctx: Context): Promise<void> {
  const id = paymentArg(ctx);
  if (id === null) return await say(ctx, ADMIN_HELP);
  try {
    await app.shop.refund(id, app.now());
  } catch (err) {
    return await say(ctx, `Платёж ${id} не возвращён: ${failureText(err)}`);
  }
  await say(ctx, `Платёж ${id} возвращён.`);
}

export async function methodCommand(app: App, ctx: Context): Promise<void> {
  const m = /^([A-Za-z0-9_-]{1,40})\s+(on|off)$/.exec(String(ctx.match ?? "").trim());
  if (!m) {
    const msg = new Msg().add("Использование: /method <способ> on|off. Способы:");
    for (const pm of await app.shop.listPaymentMethods()) {
      msg.nl().add(`• ${pm.id} (${pm.title}): ${pm.available ? "включён" : "выключен"}`);
    }
    return await say(ctx, msg);
  }
  try {
    const pm = await app.shop.setMethodAvailable(m[1]!, m[2] === "on");
    await say(ctx, `Способ ${pm.id} (${pm.title}): ${pm.available ? "включён" : "выключен"}.`);
  } catch (err) {
    await say(ctx, failureText(err));
  }
}
