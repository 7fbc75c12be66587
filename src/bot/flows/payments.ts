/**
 * Telegram Stars payments: pre_checkout_query answered within Telegram's 10 s after the shop
 * re-checks the payment (package active, method available, amount and currency), and successful_payment
 * settled exactly once (Shop.settlePayment is idempotent on the charge id and the payment id). What the
 * buyer is told after a settlement is shared with the admin's /confirm of a manual payment.
 */
import type { Api, Context } from "grammy";
import type { App } from "../../app.ts";
import { keyView } from "../../accounts/key_operations.ts";
import type { SettleResult } from "../../shop/mod.ts";
import { failure } from "../failure.ts";
import { Msg } from "../message.ts";
import { usd } from "../texts.ts";

/** Telegram cancels the payment when the answer takes longer than 10 s; refuse before that. */
const PRE_CHECKOUT_BUDGET_MS = 8_000;
const UNAVAILABLE = "Оплата сейчас недоступна. Попробуйте ещё раз через минуту.";

export async function preCheckout(app: App, ctx: Context): Promise<void> {
  const q = ctx.preCheckoutQuery!;
  const check = payable(app, q.invoice_payload, q.from.id, q.total_amount, q.currency).catch((err) => {
    app.log.error("telegram: pre-checkout check failed", { payment_id: q.invoice_payload, ...failure(err) });
    return UNAVAILABLE;
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<string>((resolve) =>
    timer = setTimeout(() => resolve(UNAVAILABLE), PRE_CHECKOUT_BUDGET_MS)
  );
  const refusal = await Promise.race([check, late]).finally(() => clearTimeout(timer));
  if (refusal === null) await ctx.answerPreCheckoutQuery(true);
  else await ctx.answerPreCheckoutQuery(false, { error_message: refusal });
}

/** Null when the payment may go ahead, else why not (in Russian, shown by Telegram). */
async function payable(app: App, paymentId: string, payer: number, amount: number, currency: string) {
  const payment = await app.shop.getPayment(paymentId);
  // Only the chat the invoice was made for pays it (a forwarded invoice would otherwise credit another chat).
  if (!payment || payment.chatId !== payer) return "Этот счёт выставлен не вам. Откройте /buy.";
  const check = await app.shop.checkPayable(paymentId, amount, currency);
  return check.ok ? null : check.reason;
}

export async function successfulPayment(app: App, ctx: Context): Promise<void> {
  const sp = ctx.message!.successful_payment!;
  let result: SettleResult;
  try {
    result = await app.shop.settlePayment(sp.invoice_payload, sp.telegram_payment_charge_id, app.now());
  } catch (err) {
    // The charge id is what the operator needs to find the payment in Telegram and refund it.
    app.log.error("telegram: payment not settled", {
      payment_id: sp.invoice_payload,
      charge_id: sp.telegram_payment_charge_id,
      ...failure(err),
    });
    await ctx.reply(
      "Оплата получена, но зачислить её сейчас не удалось. Оператор увидит платёж; номер: " +
        sp.invoice_payload,
    );
    return;
  }
  await announceSettlement(app, ctx.api, result);
}

/** Tells the buyer's chat what a settlement did; the new key's secret only on the settlement that issued it. */
export async function announceSettlement(app: App, api: Api, r: SettleResult): Promise<void> {
  const p = r.payment;
  const msg = new Msg();
  if (r.outcome === "duplicate") {
    msg.add(`Платёж ${p.id} уже зачислен.`);
  } else if (r.outcome === "refund_due") {
    msg.add(
      `Оплата получена, но способ оплаты или пакет отключили после выставления счёта. Платёж ${p.id} передан ` +
        "оператору для возврата; кредит не начислен.",
    );
  } else {
    const view = await viewOf(app, r.keyId);
    if (r.newKey !== undefined) {
      msg.add("Оплата получена, ключ выпущен:").nl().code(r.newKey).nl()
        .add("Сохраните его сейчас: бот показывает ключ только один раз, дальше — лишь его начало");
      msg.add(view ? ` (${view.hint}).` : ".");
    } else {
      msg.add(`Оплата получена: ключ ${view?.hint ?? ""} пополнен на ${usd(p.creditUsd)}.`);
    }
    if (view) msg.nl().add(`Баланс: $${view.balance_usd}.`);
    msg.nl().add(baseUrlHint(app));
  }
  await api.sendMessage(p.chatId, msg.text, { entities: msg.entities });
}

async function viewOf(app: App, keyId: string | null) {
  const acc = keyId === null ? undefined : await app.accounts.find(keyId);
  return acc ? await keyView(app.accounts, acc, app.now()) : null;
}

/** Where the key is used (spec §1.8): the base URL for Messages clients, /v1 for OpenAI-compatible ones. */
export function baseUrlHint(app: App): string {
  const base = app.config.PUBLIC_BASE_URL?.replace(/\/+$/, "");
  if (!base) return "Адрес шлюза сообщит оператор.";
  return `Адрес шлюза: ${base} (клиенты OpenAI: ${base}/v1). Ключ передаётся в Authorization: Bearer.`;
}
