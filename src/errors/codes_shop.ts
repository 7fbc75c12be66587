/** Codes of the key shop (src/shop/): its admin API and CLI, and what the bot shows of them. */
import type { ErrorSpec } from "./error_spec.ts";

const notFound = (message: string, action: string): ErrorSpec => ({
  status: 404,
  type: "not_found_error",
  message,
  action,
});

/** A 409: the request is well formed, but the record's state refuses it. */
const conflict = (message: string, action: string): ErrorSpec => ({
  status: 409,
  type: "invalid_request_error",
  message,
  action,
});

export const SHOP_CODES = {
  package_not_found: notFound("Пакет с таким id не найден.", "Проверьте id пакета: GET /admin/packages."),
  payment_method_not_found: notFound(
    "Способ оплаты с таким id не найден.",
    "Проверьте id способа оплаты: GET /admin/payment-methods.",
  ),
  payment_not_found: notFound("Платёж с таким id не найден.", "Проверьте id платежа: GET /admin/payments."),
  package_inactive: conflict("Этот пакет сейчас не продаётся.", "Выберите другой пакет."),
  payment_method_unavailable: conflict(
    "Этот способ оплаты сейчас недоступен.",
    "Выберите другой способ оплаты.",
  ),
  key_revoked: conflict("Ключ отозван.", "Выберите другой ключ или купите новый."),
  payment_not_manual: conflict(
    "Этот платёж оплачивается не вручную: его подтверждает Telegram.",
    "Подтверждайте только платежи ручного способа оплаты.",
  ),
  payment_not_refundable: conflict(
    "Этот платёж нельзя вернуть: он не оплачен или уже возвращён.",
    "Проверьте статус платежа: GET /admin/payments.",
  ),
  refund_exceeds_balance: conflict(
    "Свободный баланс ключа меньше суммы возврата.",
    "Возврат возможен, пока кредит платежа не израсходован; кредит, взятый другими процессами шлюза, " +
      "освобождается через несколько секунд — повторите позже.",
  ),
  stars_refund_unavailable: conflict(
    "Звёзды возвращает бот Telegram, а он в этом процессе шлюза не запущен.",
    "Верните платёж командой /refund в чате администратора бота или через шлюз с TELEGRAM_BOT_TOKEN.",
  ),
} as const satisfies Record<string, ErrorSpec>;
