/**
 * What the bot does with each update, in order: payments first (never rate limited: Telegram waits on
 * them), then private chats only, the per-chat command rate, the commands, the buttons (callback data
 * decoded and validated, callback_data.ts), the replies to the bot's questions, and help for anything else.
 */
import { Composer, type Context } from "grammy";
import type { App } from "../app.ts";
import { type Callback, decodeCallback } from "./callback_data.ts";
import { ChatLimit } from "./chat_limit.ts";
import { usableKeys } from "./chat_keys.ts";
import { confirmCommand, isAdminChat, methodCommand, refundCommand } from "./flows/admin.ts";
import { alertAsk, alertsCommand, alertSet, alertsOf } from "./flows/alerts.ts";
import { balanceCommand } from "./flows/balance.ts";
import { buyCommand, onPackage, onPackageKey, onPay } from "./flows/buy.ts";
import { capAsk, capsCommand, capSet, capsOf } from "./flows/caps.ts";
import { keysCommand, revokeAsk, revokeYes, rotateAsk, rotateYes } from "./flows/keys.ts";
import { preCheckout, successfulPayment } from "./flows/payments.ts";
import { thetaCommand, thetaOf, thetaSet } from "./flows/theta.ts";
import { parseAmount, parsePrompt } from "./prompts.ts";
import { answer, chatIdOf, say } from "./reply.ts";
import { ADMIN_HELP, HELP, START, T } from "./texts.ts";

export function dispatch(app: App): Composer<Context> {
  const c = new Composer<Context>();
  c.on("pre_checkout_query", (ctx) => preCheckout(app, ctx));
  c.on("message:successful_payment", (ctx) => successfulPayment(app, ctx));

  const chats = c.filter((ctx) => ctx.chat !== undefined);
  const nonPrivate = chats.filter((ctx) => ctx.chat!.type !== "private");
  nonPrivate.on("message::bot_command", (ctx) => say(ctx, T.privateOnly));
  const own = chats.filter((ctx) => ctx.chat!.type === "private");

  const limit = new ChatLimit(app.config.BOT_COMMANDS_PER_MINUTE);
  own.use(async (ctx, next) => {
    const admitted = limit.admit(chatIdOf(ctx), app.now());
    if (admitted.ok) return await next();
    const text = T.tooMany(admitted.retryAfter);
    if (ctx.callbackQuery) {
      await ctx.answerCallbackQuery(admitted.tell ? { text, show_alert: true } : undefined);
    } else if (admitted.tell) await say(ctx, text);
  });

  own.command("start", (ctx) => say(ctx, START));
  own.command("help", (ctx) => say(ctx, help(app, ctx)));
  own.command("buy", (ctx) => buyCommand(app, ctx));
  own.command("keys", (ctx) => keysCommand(app, ctx));
  own.command("balance", (ctx) => balanceCommand(app, ctx));
  own.command("caps", (ctx) => capsCommand(app, ctx));
  own.command("theta", (ctx) => thetaCommand(app, ctx));
  own.command("alerts", (ctx) => alertsCommand(app, ctx));
  const admin = own.filter((ctx) => isAdminChat(app, chatIdOf(ctx)));
  admin.command("confirm", (ctx) => confirmCommand(app, ctx));
  admin.command("refund", (ctx) => refundCommand(app, ctx));
  admin.command("method", (ctx) => methodCommand(app, ctx));

  own.on("callback_query:data", async (ctx) => {
    const cb = decodeCallback(ctx.callbackQuery.data);
    if (cb === null) return await ctx.answerCallbackQuery({ text: T.stale });
    await ctx.answerCallbackQuery();
    await onButton(app, ctx, cb);
  });
  own.on("message:text", async (ctx, next) => {
    const asked = ctx.message.reply_to_message;
    if (asked?.from?.id !== ctx.me.id || asked.text === undefined) return await next();
    await onAnswer(app, ctx, asked.text, ctx.message.text);
  });
  // Unknown commands, other text and anything else a person sends: what the bot can do.
  own.on("message", (ctx) => say(ctx, help(app, ctx)));
  return c;
}

function help(app: App, ctx: Context): string {
  return isAdminChat(app, chatIdOf(ctx)) ? `${HELP}\n\n${ADMIN_HELP}` : HELP;
}

function onButton(app: App, ctx: Context, cb: Callback): Promise<void> {
  switch (cb.a) {
    case "buy":
      return buyCommand(app, ctx);
    case "pkg":
      return onPackage(app, ctx, cb.pkg);
    case "pkgkey":
      return onPackageKey(app, ctx, cb.pkg, cb.key);
    case "pay":
      return onPay(app, ctx, cb.pkg, cb.key, cb.method);
    case "rotate":
      return rotateAsk(app, ctx, cb.key);
    case "rotate_yes":
      return rotateYes(app, ctx, cb.key);
    case "revoke":
      return revokeAsk(app, ctx, cb.key);
    case "revoke_yes":
      return revokeYes(app, ctx, cb.key);
    case "cancel":
      return answer(ctx, T.cancelled);
    case "caps":
      return capsOf(app, ctx, cb.key);
    case "cap_set":
      return capAsk(app, ctx, cb.key, cb.field);
    case "theta":
      return thetaOf(app, ctx, cb.key);
    case "theta_set":
      return thetaSet(app, ctx, cb.key, cb.paused);
    case "alerts":
      return alertsOf(app, ctx, cb.key);
    case "alert_set":
      return alertAsk(app, ctx, cb.key);
  }
}

/** A reply to one of the bot's questions (prompts.ts): the amount for the key the question named. */
async function onAnswer(app: App, ctx: Context, question: string, reply: string): Promise<void> {
  const prompt = parsePrompt(question);
  if (prompt === null) return await say(ctx, help(app, ctx));
  const amount = parseAmount(reply);
  if (amount === undefined) {
    return await say(
      ctx,
      "Не понял сумму. Ответьте на вопрос числом в долларах, например 5 или 2.50, или «нет».",
    );
  }
  const key = (await usableKeys(app.shop, chatIdOf(ctx))).find((k) => k.hint === prompt.hint);
  if (!key) return await say(ctx, T.keyNotFound);
  if (prompt.kind === "cap") await capSet(app, ctx, key, prompt.field, amount);
  else await alertSet(app, ctx, key, amount);
}
