/**
 * /keys: the chat's keys with their state and balance; rotate (a new secret, same key, balance and
 * settings, the old secret refused from the next request on) and revoke, each behind a confirmation button.
 * Every action finds the key among the chat's own first (chat_keys.ts).
 */
import { type Context, InlineKeyboard } from "grammy";
import type { App } from "../../app.ts";
import { keyState, keyView } from "../../accounts/key_operations.ts";
import type { KeyRecord } from "../../store/types.ts";
import { encodeCallback } from "../callback_data.ts";
import { ownedKey } from "../chat_keys.ts";
import { Msg } from "../message.ts";
import { answer, chatIdOf, say } from "../reply.ts";
import { T } from "../texts.ts";
import { baseUrlHint } from "./payments.ts";

const STATE: Record<ReturnType<typeof keyState>, string> = {
  active: "активен",
  revoked: "отозван",
  expired: "истёк",
  suspended: "временно заморожен",
};

export function stateText(app: App, k: KeyRecord): string {
  return STATE[keyState(k, app.now())];
}

export async function keysCommand(app: App, ctx: Context): Promise<void> {
  const keys = await app.shop.keysOfChat(chatIdOf(ctx));
  if (keys.length === 0) return await say(ctx, T.noKeys);
  const msg = new Msg().add("Ваши ключи:");
  const kb = new InlineKeyboard();
  for (const k of keys) {
    msg.nl().add(`• ${k.hint} — ${stateText(app, k)}`);
    if (k.revoked) continue;
    const acc = await app.accounts.find(k.id);
    if (acc) msg.add(`, баланс $${(await keyView(app.accounts, acc, app.now())).balance_usd}`);
    kb.text(`Сменить ${k.hint}`, encodeCallback({ a: "rotate", key: k.id }))
      .text(`Отозвать ${k.hint}`, encodeCallback({ a: "revoke", key: k.id })).row();
  }
  await say(ctx, msg, kb);
}

const confirm = (yes: string, data: string) =>
  new InlineKeyboard().text(yes, data).text("Отмена", encodeCallback({ a: "cancel" }));

export async function rotateAsk(app: App, ctx: Context, keyId: string): Promise<void> {
  const key = await ownedKey(app.shop, chatIdOf(ctx), keyId);
  if (!key) return await answer(ctx, T.keyNotFound);
  await say(
    ctx,
    `Сменить ключ ${key.hint}? Баланс и настройки останутся, старый ключ перестанет работать сразу.`,
    confirm("Да, сменить", encodeCallback({ a: "rotate_yes", key: key.id })),
  );
}

export async function rotateYes(app: App, ctx: Context, keyId: string): Promise<void> {
  const chatId = chatIdOf(ctx);
  if (!(await ownedKey(app.shop, chatId, keyId))) return await answer(ctx, T.keyNotFound);
  const { newKey } = await app.shop.rotateKey(chatId, keyId);
  await answer(
    ctx,
    new Msg().add("Новый ключ:").nl().code(newKey).nl()
      .add("Сохраните его сейчас: бот показывает ключ только один раз. Старый ключ больше не работает.").nl()
      .add(baseUrlHint(app)),
  );
}

export async function revokeAsk(app: App, ctx: Context, keyId: string): Promise<void> {
  const key = await ownedKey(app.shop, chatIdOf(ctx), keyId);
  if (!key) return await answer(ctx, T.keyNotFound);
  await say(
    ctx,
    `Отозвать ключ ${key.hint}? Он перестанет работать сразу и навсегда; остаток баланса не вернётся.`,
    confirm("Да, отозвать", encodeCallback({ a: "revoke_yes", key: key.id })),
  );
}

export async function revokeYes(app: App, ctx: Context, keyId: string): Promise<void> {
  const chatId = chatIdOf(ctx);
  const key = await ownedKey(app.shop, chatId, keyId);
  if (!key) return await answer(ctx, T.keyNotFound);
  await app.shop.revokeKey(chatId, keyId);
  await answer(ctx, `Ключ ${key.hint} отозван.`);
}
