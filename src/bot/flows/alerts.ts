/**
 * /alerts: the low-balance threshold of a key — the bot writes once each time the balance falls
 * below it (alert_loop.ts); by default 10% of the last purchase's credit.
 */
import { type Context, InlineKeyboard } from "grammy";
import type { App } from "../../app.ts";
import type { KeyRecord } from "../../store/types.ts";
import { encodeCallback } from "../callback_data.ts";
import { ownedKey } from "../chat_keys.ts";
import { ASK_AMOUNT, promptText } from "../prompts.ts";
import { answer, chatIdOf, say } from "../reply.ts";
import { T, usd } from "../texts.ts";
import { pickKey } from "./pick_key.ts";

export async function alertsCommand(app: App, ctx: Context): Promise<void> {
  await pickKey(app, ctx, (key) => ({ a: "alerts", key }), (k) => showAlerts(app, ctx, k));
}

export async function alertsOf(app: App, ctx: Context, keyId: string): Promise<void> {
  const key = await ownedKey(app.shop, chatIdOf(ctx), keyId);
  if (!key) return await answer(ctx, T.keyNotFound);
  await showAlerts(app, ctx, key);
}

async function showAlerts(app: App, ctx: Context, key: KeyRecord): Promise<void> {
  const owner = await app.shop.keyOwner(key.id);
  const threshold = owner === null
    ? "не задан"
    : owner.alertThreshold === null
    ? `${usd(owner.lastCreditUsd / 10n)} (10% от последней покупки)`
    : usd(owner.alertThreshold);
  await say(
    ctx,
    `Порог предупреждения для ${key.hint}: ${threshold}. Когда баланс опустится ниже, бот напишет сюда один ` +
      "раз (и снова — после пополнения и нового снижения).",
    new InlineKeyboard().text("Задать порог", encodeCallback({ a: "alert_set", key: key.id })),
  );
}

export async function alertAsk(app: App, ctx: Context, keyId: string): Promise<void> {
  const key = await ownedKey(app.shop, chatIdOf(ctx), keyId);
  if (!key) return await answer(ctx, T.keyNotFound);
  await ctx.reply(promptText({ kind: "alert", hint: key.hint }), { reply_markup: ASK_AMOUNT });
}

export async function alertSet(app: App, ctx: Context, key: KeyRecord, amount: bigint | null): Promise<void> {
  await app.shop.setAlertThreshold(chatIdOf(ctx), key.id, amount);
  await say(
    ctx,
    amount === null
      ? `Порог для ${key.hint}: 10% от последней покупки.`
      : `Порог для ${key.hint}: ${usd(amount)}. Бот напишет, когда баланс опустится ниже.`,
  );
}
