/**
 * /caps (spec §5.5): a key's hourly and daily spend caps and reserve caps, shown and set through
 * the key operations the admin API uses (applyKeyAction "caps"); the gateway applies them from its next
 * request on. A cap is set by replying to the bot's question with an amount, or «нет» to lift it.
 */
import { type Context, InlineKeyboard } from "grammy";
import type { App } from "../../app.ts";
import { applyKeyAction, keyView } from "../../accounts/key_operations.ts";
import { formatUsd } from "../../money/usd.ts";
import type { KeyRecord } from "../../store/types.ts";
import { CAP_FIELDS, type CapField, encodeCallback } from "../callback_data.ts";
import { ownedKey } from "../chat_keys.ts";
import { Msg } from "../message.ts";
import { ASK_AMOUNT, CAP_LABEL, promptText } from "../prompts.ts";
import { answer, chatIdOf, failureText, say } from "../reply.ts";
import { T } from "../texts.ts";
import { pickKey } from "./pick_key.ts";

export async function capsCommand(app: App, ctx: Context): Promise<void> {
  await pickKey(app, ctx, (key) => ({ a: "caps", key }), (k) => showCaps(app, ctx, k));
}

export async function capsOf(app: App, ctx: Context, keyId: string): Promise<void> {
  const key = await ownedKey(app.shop, chatIdOf(ctx), keyId);
  if (!key) return await answer(ctx, T.keyNotFound);
  await showCaps(app, ctx, key);
}

async function showCaps(app: App, ctx: Context, key: KeyRecord): Promise<void> {
  const acc = await app.accounts.find(key.id);
  if (!acc) return await say(ctx, T.keyNotFound);
  const caps = (await keyView(app.accounts, acc, app.now())).caps;
  const msg = new Msg().add(`Лимиты ключа ${key.hint}:`);
  const kb = new InlineKeyboard();
  for (const f of CAP_FIELDS) {
    msg.nl().add(`• ${CAP_LABEL[f]}: ${caps[f] === null ? "нет" : `$${caps[f]}`}`);
    kb.text(`Изменить: ${CAP_LABEL[f]}`, encodeCallback({ a: "cap_set", key: key.id, field: f })).row();
  }
  msg.nl().add("Запрос сверх лимита шлюз отклонит с кодом лимита (429).");
  await say(ctx, msg, kb);
}

export async function capAsk(app: App, ctx: Context, keyId: string, field: CapField): Promise<void> {
  const key = await ownedKey(app.shop, chatIdOf(ctx), keyId);
  if (!key) return await answer(ctx, T.keyNotFound);
  await ctx.reply(promptText({ kind: "cap", field, hint: key.hint }), { reply_markup: ASK_AMOUNT });
}

/** The reply to a cap question: the amount (or null: no cap) for that key's field. */
export async function capSet(app: App, ctx: Context, key: KeyRecord, field: CapField, amount: bigint | null) {
  try {
    await applyKeyAction(app.accounts, key.id, "caps", {
      [field]: amount === null ? null : formatUsd(amount),
    }, app.now());
  } catch (err) {
    return await say(ctx, failureText(err));
  }
  await say(
    ctx,
    `Готово: ${CAP_LABEL[field]} для ${key.hint} — ${amount === null ? "нет" : `$${formatUsd(amount)}`}.`,
  );
  await showCaps(app, ctx, key);
}
