/** How the flows answer: a message (or an edit of the one whose button was pressed), and errors in Russian. */
import type { Context, InlineKeyboard } from "grammy";
import { errorSpec } from "../errors/codes.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import { Msg } from "./message.ts";
import { T } from "./texts.ts";

/** The chat of a message or of the message whose button was pressed (the bot serves private chats only). */
export function chatIdOf(ctx: Context): number {
  const id = ctx.chat?.id;
  if (id === undefined) throw new Error("update without a chat");
  return id;
}

const asMsg = (m: Msg | string) => (typeof m === "string" ? new Msg().add(m) : m);

/** A new message in the chat. */
export async function say(ctx: Context, m: Msg | string, keyboard?: InlineKeyboard): Promise<void> {
  const msg = asMsg(m);
  await ctx.reply(msg.text, { entities: msg.entities, ...(keyboard ? { reply_markup: keyboard } : {}) });
}

/**
 * Replaces the message whose button was pressed (its buttons go with it, so a confirmation cannot be
 * pressed twice); a typed command gets a new message.
 */
export async function answer(ctx: Context, m: Msg | string, keyboard?: InlineKeyboard): Promise<void> {
  if (!ctx.callbackQuery?.message) return await say(ctx, m, keyboard);
  const msg = asMsg(m);
  await ctx.editMessageText(msg.text, {
    entities: msg.entities,
    ...(keyboard ? { reply_markup: keyboard } : {}),
  });
}

/** What a person reads about a failure: a gateway error's own Russian message, else the generic one. */
export function failureText(err: unknown): string {
  if (err instanceof GatewayError) {
    const m = errorSpec(err.code).message;
    return err.detail ? `${m} ${err.detail}` : m;
  }
  return T.failed;
}
