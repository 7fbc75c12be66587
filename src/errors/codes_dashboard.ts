/** Codes of the key holder's dashboard (src/dashboard/), beyond the spec. */
import { type ErrorSpec, limit } from "./error_spec.ts";

export const DASHBOARD_CODES = {
  csrf_failed: {
    status: 403,
    type: "permission_error",
    message: "Форма устарела или отправлена не со страницы панели.",
    action: "Откройте панель заново и повторите действие.",
  },
  dashboard_login_rate_limit: limit(
    "Слишком много неудачных попыток входа с этого адреса.",
    "Повторите вход после времени из заголовка Retry-After.",
  ),
} as const satisfies Record<string, ErrorSpec>;
