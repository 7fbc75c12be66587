/** Bot settings: the key shop's Telegram bot (spec §1.6, §5.5). */
import { z } from "zod";
import { ms, optionalUrl } from "./fields.ts";

export const bot = {
  PUBLIC_BASE_URL: optionalUrl.describe(
    "The gateway's address as its clients reach it (https://gw.example.com): the bot shows it with " +
      "a new key and, in webhook mode, registers its webhook under it.",
  ),
  TELEGRAM_BOT_TOKEN: z.string().regex(
    /^\d+:[A-Za-z0-9_-]+$/,
    "expected a Telegram bot token (<id>:<secret>)",
  ).optional().describe("The bot's token from @BotFather (`<id>:<secret>`). Unset: no bot."),
  TELEGRAM_API_ROOT: z.string().url().default("https://api.telegram.org").describe(
    "The Bot API server; tests point it at a fake one. Default https://api.telegram.org.",
  ),
  TELEGRAM_WEBHOOK_SECRET: z.string().regex(
    /^[A-Za-z0-9_-]{16,256}$/,
    "16 to 256 characters of A-Z, a-z, 0-9, _ and -",
  ).optional().describe(
    "Set: webhook mode, Telegram posts updates to `PUBLIC_BASE_URL/telegram/<hook>` (a hook " +
      "derived from this secret) with the secret in X-Telegram-Bot-Api-Secret-Token; needs " +
      "`PUBLIC_BASE_URL`. Unset: long polling, one gateway process.",
  ),
  TELEGRAM_ADMIN_CHAT_IDS: z.string().default("").transform((s, ctx) => {
    const ids = s.split(",").map((p) => p.trim()).filter((p) => p !== "");
    if (ids.some((id) => !/^-?\d{1,20}$/.test(id) || !Number.isSafeInteger(Number(id)))) {
      ctx.addIssue({ code: "custom", message: "expected comma-separated Telegram chat ids" });
      return z.NEVER;
    }
    return ids.map(Number);
  }).describe(
    "Comma-separated Telegram chat ids allowed the operator's commands /confirm, /refund and " +
      "/method. Default empty: none.",
  ),
  BOT_ALERT_CHECK_MS: ms(30_000).describe(
    "How often the bot looks for keys whose balance fell below their alert threshold, ms. Default " +
      "30 s.",
  ),
  BOT_COMMANDS_PER_MINUTE: z.coerce.number().int().min(1).max(10_000).default(20).describe(
    "Messages and button presses one chat may send per minute, per process; beyond, a polite " +
      "refusal. Default 20.",
  ),
};
