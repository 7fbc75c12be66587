/**
 * The operator's chat commands (chats in TELEGRAM_ADMIN_CHAT_IDS; issue 20): the admin API's two payment
 * actions — confirm a manual payment, refund a payment (Stars back through Telegram's refundStarPayment, then
 * the key debited by the shop) — and the payment-method switch. Other chats get help for these commands.
 */
import type { Context } from "grammy";
import type { App } from "../../app.ts";
import { keyView } from "../../accounts/key_operations.ts";
import { parseUsd } from "../../money/usd.ts";
import type { Payment } from "../../shop/mod.ts";
import { failure } from "../failure.ts";
import { Msg } from "../message.ts";
import { failureText, say } from "../reply.ts";
import { ADMIN_HELP, usd } from "../texts.ts";
import { announceSettlement } from "./payments.ts";

export function isAdminChat(app: App, chatId: number): boolean {
  return app.config.TELEGRAM_ADMIN_CHAT_IDS.includes(chatId);
}

/** The one argument of /confirm and /refund. */
function paymentArg(ctx: Context): string | null {
  const arg = String(ctx.match ?? "").trim();
  return /^[A-Za-z0-9_-]{1,64}$/.test(arg) ? arg : null;
}

async function findPayment(app: App, ctx: Context): Promise<Payment | null> {
  const id = paymentArg(ctx);
  const payment = id === null ? null : await app.shop.getPayment(id);
  if (!payment) await say(ctx, id === null ? ADMIN_HELP : `Платёж ${id} не найден.`);
  return payment;
}

export async function confirmCommand(app: App, ctx: Context): Promise<void> {
  const payment = await findPayment(app, ctx);
  if (!payment) return;
  const method = (await app.shop.listPaymentMethods()).find((m) => m.id === payment.methodId);
  if (method?.kind !== "manual") {
    return await say(ctx, `Платёж ${payment.id} не ручной: его подтверждает Telegram.`);
  }
  let result;
  try {
    result = await app.shop.settlePayment(payment.id, null, app.now());
  } catch (err) {
    return await say(ctx, `Платёж ${payment.id} не зачислен: ${failureText(err)}`);
  }
  const outcome = {
    credited: "зачислен",
    duplicate: "уже был зачислен",
    refund_due: "не зачислен: способ оплаты или пакет отключены, платёж ждёт возврата",
  }[result.outcome];
  await say(ctx, `Платёж ${payment.id}: ${outcome}.`);
  if (result.outcome !== "duplicate") await announceSettlement(app, ctx.api, result);
}

export async function refundCommand(app: App, ctx: Context): Promise<void> {
  const payment = await findPayment(app, ctx);
  if (!payment) return;
  if (payment.status !== "credited" && payment.status !== "refund_due") {
    return await say(ctx, `Платёж ${payment.id} вернуть нельзя: его статус ${payment.status}.`);
  }
  // The debit must be possible before the Stars go back: a refund the key cannot cover is refused first.
  if (payment.status === "credited" && payment.keyId !== null && !(await covers(app, payment))) {
    return await say(
      ctx,
      `Платёж ${payment.id} не возвращён: на балансе ключа меньше ${usd(payment.creditUsd)}.`,
    );
  }
  const method = (await app.shop.listPaymentMethods()).find((m) => m.id === payment.methodId);
  if (method?.kind === "stars" && payment.telegramChargeId !== null) {
    try {
      await ctx.api.refundStarPayment(payment.chatId, payment.telegramChargeId);
    } catch (err) {
      return await say(
        ctx,
        `Telegram не вернул звёзды по платежу ${payment.id}: ${String(failure(err).error)}.`,
      );
    }
  }
  try {
    await app.shop.refundPayment(payment.id, app.now());
  } catch (err) {
    app.log.error("telegram: refund not recorded after the Stars went back", {
      payment_id: payment.id,
      ...failure(err),
    });
    return await say(
      ctx,
      `Звёзды по платежу ${payment.id} возвращены, но списание не записано: ${failureText(err)}`,
    );
  }
  await say(ctx, `Платёж ${payment.id} возвращён.`);
  await ctx.api.sendMessage(payment.chatId, `Платёж ${payment.id} возвращён оператором.`);
}

async function covers(app: App, payment: Payment): Promise<boolean> {
  const acc = await app.accounts.find(payment.keyId!);
  if (!acc) return false;
  const balance = (await keyView(app.accounts, acc, app.now())).balance_usd;
  return !balance.startsWith("-") && parseUsd(balance) >= payment.creditUsd;
}

export async function methodCommand(app: App, ctx: Context): Promise<void> {
  const m = /^([A-Za-z0-9_-]{1,40})\s+(on|off)$/.exec(String(ctx.match ?? "").trim());
  if (!m) {
    const methods = await app.shop.listPaymentMethods();
    const msg = new Msg().add("Использование: /method <способ> on|off. Способы:");
    for (const pm of methods) {
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
