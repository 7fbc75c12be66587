/** Families gamma and eta (spec §7.5). */
import { bad, type ErrorSpec, limit } from "./error_spec.ts";

export const DELTA_CODES = {
  // spec §7.5 families gamma and eta
  delta_parameter_unavailable: bad(
    "Поле не входит в список поддерживаемых для этой модели.",
    "Уберите поле, указанное в param. Gamma и eta принимают: в Messages — model, messages, max_tokens, system, " +
      "stream, tools, tool_choice; в Chat Completions — model, messages, max_tokens, max_completion_tokens, " +
      "stream, tools, tool_choice; в Responses — model, input, instructions, max_output_tokens, stream, tools, " +
      "tool_choice. Поля temperature, top_p, metadata и thinking принимаются и не действуют.",
  ),
  delta_client_tools_unavailable: bad(
    "Инструменты провайдера во входных данных не поддерживаются.",
    "Уберите элементы встроенных инструментов провайдера из input.",
  ),
  delta_client_tools_invalid: bad(
    "Описание инструментов некорректно.",
    "Не более 64 инструментов, уникальные имена, схема до 256 КиБ.",
  ),
  delta_client_tool_result_invalid: bad(
    "Результат инструмента некорректен.",
    "Исправьте результат инструмента.",
  ),
  delta_client_tool_result_too_large: bad(
    "Результат инструмента больше 8 МиБ.",
    "Сократите результат инструмента.",
  ),
  delta_client_tool_result_unsupported: bad(
    "Формат результата инструмента не поддерживается.",
    "Передайте результат инструмента текстом.",
  ),
  delta_image_input_unavailable: bad(
    "Модели gamma не принимают изображения.",
    "Уберите изображения из запроса.",
  ),
  delta_image_input_invalid: bad(
    "Изображение некорректно: нужен встроенный base64 поддерживаемого типа, не более 16 штук.",
    "Исправьте изображения в запросе.",
  ),
  delta_daily_spend_limit: limit(
    "Достигнут ваш дневной лимит расходов.",
    "Дождитесь конца окна из Retry-After или поднимите лимит в боте.",
  ),
  delta_hourly_spend_limit: limit(
    "Достигнут ваш часовой лимит расходов.",
    "Дождитесь конца окна из Retry-After или поднимите лимит в боте.",
  ),
  delta_daily_reserve_limit: limit(
    "Резерв запроса превышает ваш дневной лимит резерва.",
    "Уменьшите max_tokens или поднимите лимит в боте.",
  ),
  delta_hourly_reserve_limit: limit(
    "Резерв запроса превышает ваш часовой лимит резерва.",
    "Уменьшите max_tokens или поднимите лимит в боте.",
  ),
  delta_key_pause_limit: limit(
    "Ключ достиг предела незавершённых циклов инструментов.",
    "Завершите один из открытых циклов: отправьте результаты его вызовов инструментов, такой запрос " +
      "принимается всегда. Простой повтор не поможет; незавершённый цикл освобождает место, только когда " +
      "истекает (Retry-After).",
  ),
  delta_model_mismatch: {
    status: 502,
    type: "api_error",
    message: "Провайдер ответил другой моделью.",
    action: "Повторите запрос.",
  },
  delta_unavailable: {
    status: 503,
    type: "api_error",
    message: "Модели gamma и eta временно недоступны.",
    action: "Повторите запрос с экспоненциальной задержкой.",
  },
  delta_run_timeout: {
    status: 504,
    type: "timeout_error",
    message: "Выполнение не уложилось в предел времени и отменено; выполненная работа оплачивается.",
    action: "Используйте потоковый режим или сократите задачу.",
  },
  delta_output_limit_exceeded: {
    status: 502,
    type: "api_error",
    message: "Цикл превысил предел вывода; выполненная работа оплачивается.",
    action: "Уменьшите задачу или используйте потоковый режим.",
  },
  delta_upstream_error: {
    status: 502,
    type: "api_error",
    message: "Выполнение не завершилось у провайдера.",
    action: "Повторите запрос.",
  },
} as const satisfies Record<string, ErrorSpec>;
