/** Codes common to every family (spec §7.3), plus the operator API's. */
import { bad, type ErrorSpec, limit } from "./error_spec.ts";

export const COMMON_CODES = {
  // spec §7.3 authentication
  missing_api_key: {
    status: 401,
    type: "authentication_error",
    auth: true,
    message: "Ключ API не передан.",
    action: "Передайте ключ в заголовке Authorization: Bearer <ключ> или x-api-key.",
  },
  invalid_api_key: {
    status: 401,
    type: "authentication_error",
    auth: true,
    message: "Ключ API не распознан.",
    action: "Проверьте, что ключ скопирован полностью и начинается с gd-.",
  },
  api_key_revoked: {
    status: 401,
    type: "authentication_error",
    auth: true,
    message: "Ключ API отозван.",
    action: "Получите новый ключ в боте.",
  },
  api_key_expired: {
    status: 401,
    type: "authentication_error",
    auth: true,
    message: "Срок действия ключа API истёк.",
    action: "Получите новый ключ в боте.",
  },
  api_key_suspended: {
    status: 429,
    type: "rate_limit_error",
    auth: true,
    message: "Ключ API временно заморожен правилом безопасности.",
    action: "Повторите запрос после времени из заголовка Retry-After.",
  },
  api_key_paused: {
    status: 403,
    type: "permission_error",
    auth: true,
    message: "Семейство theta приостановлено для этого ключа в панели управления.",
    action: "Снимите паузу theta для ключа в панели управления.",
  },
  // spec §7.3 billing
  insufficient_credit: {
    status: 402,
    type: "billing_error",
    message: "Баланс ключа исчерпан.",
    action: "Пополните баланс в боте.",
  },
  request_reserve_exceeds_credit: {
    status: 402,
    type: "billing_error",
    message: "Остатка баланса не хватает на резерв этого запроса.",
    action: "Пополните баланс или уменьшите max_tokens.",
  },
  daily_spend_limit: limit(
    "Достигнут ваш дневной лимит расходов.",
    "Дождитесь конца окна из Retry-After или поднимите лимит в боте.",
  ),
  hourly_spend_limit: limit(
    "Достигнут ваш часовой лимит расходов.",
    "Дождитесь конца окна из Retry-After или поднимите лимит в боте.",
  ),
  daily_reserve_limit: limit(
    "Резерв запроса превышает ваш дневной лимит резерва.",
    "Уменьшите max_tokens или поднимите лимит в боте.",
  ),
  hourly_reserve_limit: limit(
    "Резерв запроса превышает ваш часовой лимит резерва.",
    "Уменьшите max_tokens или поднимите лимит в боте.",
  ),
  // spec §7.3 request shape
  invalid_json: bad("Тело запроса не является корректным JSON.", "Отправьте тело в формате JSON."),
  invalid_body_type: bad(
    "Тело запроса должно быть JSON-объектом.",
    "Отправьте JSON-объект в фигурных скобках.",
  ),
  invalid_request: bad("Запрос некорректен.", "Исправьте поле, указанное в param."),
  idempotency_key_reused: {
    status: 409,
    type: "invalid_request_error",
    message: "Этот Idempotency-Key уже использован для другого запроса.",
    action: "Для нового запроса возьмите новый Idempotency-Key; повтор должен совпадать с первым запросом.",
  },
  idempotency_replay_unavailable: {
    status: 409,
    type: "invalid_request_error",
    message:
      "Ответ на запрос с этим Idempotency-Key не сохранён целиком: он слишком велик или был прерван, когда клиентов не осталось.",
    action: "Отправьте запрос заново с новым Idempotency-Key.",
  },

  unsupported_parameter: bad(
    "Параметр не поддерживается на этой поверхности или модели.",
    "Уберите параметр, указанный в param.",
  ),
  invalid_parameter: bad(
    "Недопустимое значение параметра.",
    "Исправьте значение параметра, указанного в param.",
  ),
  messages_required: bad("Поле messages обязательно.", "Добавьте непустой массив messages."),
  model_required: bad("Поле model обязательно.", "Укажите идентификатор модели из GET /v1/models."),
  model_not_found: {
    status: 404,
    type: "not_found_error",
    message: "Модель не найдена в каталоге.",
    action: "Выберите точный идентификатор модели из GET /v1/models.",
  },
  route_not_found: {
    status: 404,
    type: "not_found_error",
    message: "Такого пути нет.",
    action: "Проверьте адрес запроса и базовый URL.",
  },
  method_not_allowed: {
    status: 405,
    type: "invalid_request_error",
    message: "Метод не поддерживается для этого пути.",
    action: "Используйте метод из заголовка Allow.",
  },
  // HTTP-level faults the gateway sees (docs/api.md "Errors"; larger heads are refused by Deno itself)
  request_body_unreadable: bad(
    "Тело запроса не удалось прочитать: нарушено HTTP-кадрирование (chunked, Content-Length) или поток оборван.",
    "Отправьте тело целиком с корректным Content-Length или chunked-кодированием.",
  ),
  request_uri_too_long: {
    status: 414,
    type: "invalid_request_error",
    message: "Адрес запроса (путь и параметры) слишком длинный.",
    action: "Сократите путь и параметры запроса до 8 КиБ.",
  },
  request_header_fields_too_large: {
    status: 431,
    type: "invalid_request_error",
    message: "Заголовки запроса слишком большие.",
    action: "Отправьте не более 100 заголовков общим размером до 32 КиБ.",
  },
  request_body_too_large: {
    status: 413,
    type: "invalid_request_error",
    message: "Тело запроса слишком большое.",
    action: "Уменьшите запрос или загрузите документ через /v1/files.",
  },
  context_length_exceeded: bad(
    "Запрос не помещается в контекстное окно модели.",
    "Сократите историю или уменьшите max_tokens.",
  ),
  product_modes_removed: {
    status: 410,
    type: "invalid_request_error",
    message: "Фильтр mode больше не поддерживается.",
    action: "Уберите параметр mode и используйте family и endpoint.",
  },
  cyber_refusal: bad(
    "Модель отказалась отвечать на запрос, связанный с кибербезопасностью.",
    "Переформулируйте запрос.",
  ),
  client_key_rate_limit: limit("Слишком много запросов с этого ключа.", "Повторите после Retry-After."),
  client_ip_rate_limit: limit("Слишком много запросов с этого адреса.", "Повторите после Retry-After."),
  service_capacity_saturated: limit("Все слоты сервиса заняты.", "Повторите после Retry-After."),
  standard_capacity_saturated: limit("Все стандартные слоты заняты.", "Повторите после Retry-After."),
  service_unavailable: {
    status: 503,
    type: "api_error",
    message: "Сервис временно недоступен.",
    action: "Повторите запрос с экспоненциальной задержкой.",
  },
  upstream_unavailable: {
    status: 503,
    type: "api_error",
    message: "Провайдер модели временно недоступен.",
    action: "Повторите запрос с экспоненциальной задержкой, не меняя модель вслепую.",
  },
  stream_service_error: {
    status: 502,
    type: "api_error",
    message: "Поток ответа прервался из-за сбоя.",
    action: "Повторите запрос; уже полученная часть ответа неполная.",
  },
  stream_timeout: {
    status: 504,
    type: "timeout_error",
    message: "Провайдер слишком долго не присылал данные, поток закрыт.",
    action: "Повторите запрос.",
  },
  upstream_timeout: {
    status: 504,
    type: "timeout_error",
    message: "Провайдер не начал отвечать вовремя; запрос не оплачивается.",
    action: "Повторите запрос; для длинных ответов используйте потоковый режим.",
  },
  internal_error: {
    status: 500,
    type: "api_error",
    message: "Внутренняя ошибка сервиса.",
    action: "Повторите запрос; если ошибка повторяется, сообщите в поддержку хвост сообщения.",
  },
  upstream_invalid_response: {
    status: 502,
    type: "api_error",
    message: "Провайдер вернул некорректный ответ.",
    action: "Повторите запрос.",
  },
  usage_rate_limit: limit(
    "Отчёт об использовании запрашивается слишком часто.",
    "Повторите после Retry-After.",
  ),
  invalid_cursor: bad("Курсор страницы некорректен.", "Начните листание заново без cursor."),
  validation_error: {
    status: 422,
    type: "invalid_request_error",
    message: "Параметр запроса не прошёл проверку.",
    action: "Исправьте параметр, указанный в param.",
  },
  // operator API (beyond the spec)
  admin_unauthorized: {
    status: 401,
    type: "authentication_error",
    message: "Неверный или отсутствующий токен администратора.",
    action: "Передайте ADMIN_TOKEN в заголовке Authorization: Bearer.",
  },
  key_not_found: {
    status: 404,
    type: "not_found_error",
    message: "Ключ с таким id не найден.",
    action: "Проверьте id ключа.",
  },
} as const satisfies Record<string, ErrorSpec>;
