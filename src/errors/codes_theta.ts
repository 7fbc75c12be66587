/** Family theta (spec §7.6). */
import { type ErrorSpec, limit } from "./error_spec.ts";

export const THETA_CODES = {
  // spec §7.6 family theta
  queue_timeout: {
    status: 429,
    type: "rate_limit_error",
    retryAfter: 30,
    // The wait's limit is THETA_QUEUE_TIMEOUT_MS (30 s by default): the detail says the configured one.
    message: "За время ожидания не освободился ни один аккаунт theta.",
    action: "Повторите через 30 секунд.",
  },
  provider_at_capacity: {
    status: 429,
    type: "rate_limit_error",
    retryAfter: 5,
    message: "Нет свободной подходящей модели theta.",
    action: "Повторите через 5 секунд.",
  },
  theta_unavailable: {
    status: 503,
    type: "api_error",
    retryAfter: 30,
    message: "Семейство theta временно недоступно.",
    action: "Повторите через 30 секунд.",
  },
  customer_hour_limit: limit("Достигнут ваш часовой лимит theta.", "Дождитесь конца часа."),
  customer_day_limit: limit("Достигнут ваш дневной лимит theta.", "Дождитесь конца суток."),
  generation_timeout: {
    status: 504,
    type: "timeout_error",
    // THETA_GENERATION_TIMEOUT_MS (10 minutes by default): the detail says the configured limit.
    message: "Генерация ответа превысила предел времени и остановлена; выполненная работа оплачивается.",
    action: "Сократите задачу или разбейте её на части.",
  },
} as const satisfies Record<string, ErrorSpec>;
