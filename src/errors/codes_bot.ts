/** Codes of the key shop's Telegram bot (src/bot/), beyond the spec. */
import type { ErrorSpec } from "./error_spec.ts";

export const BOT_CODES = {
  /** The webhook route (POST /telegram/<hook>): the update is refused unread. */
  telegram_secret_mismatch: {
    status: 401,
    type: "authentication_error",
    message: "Секрет вебхука Telegram не совпадает.",
    action: "Проверьте TELEGRAM_WEBHOOK_SECRET: бот регистрирует вебхук с ним сам при запуске.",
  },
} as const satisfies Record<string, ErrorSpec>;
