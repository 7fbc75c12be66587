/**
 * Every error code the gateway can emit (§7.3–§7.6), as data. The only place where a status,
 * an error class, a Russian message and a Russian next step are attached to a code.
 */

export type ErrorClass =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "billing_error"
  | "rate_limit_error"
  | "api_error"
  | "timeout_error";

export interface ErrorSpec {
  status: number;
  type: ErrorClass;
  message: string;
  action: string;
  /** Fixed Retry-After (seconds) where the spec gives one. */
  retryAfter?: number;
  /** Authentication failure: the body mirrors the object under `detail.error` (§5.4). */
  auth?: boolean;
}

const bad = (message: string, action: string): ErrorSpec => ({
  status: 400,
  type: "invalid_request_error",
  message,
  action,
});
const limit = (message: string, action: string): ErrorSpec => ({
  status: 429,
  type: "rate_limit_error",
  message,
  action,
});

export const ERROR_CODES = {
  // §7.3 authentication
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
  // §7.3 billing
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
  // §7.3 request shape
  invalid_json: bad("Тело запроса не является корректным JSON.", "Отправьте тело в формате JSON."),
  invalid_body_type: bad(
    "Тело запроса должно быть JSON-объектом.",
    "Отправьте JSON-объект в фигурных скобках.",
  ),
  invalid_request: bad("Запрос некорректен.", "Исправьте поле, указанное в param."),
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
  // §7.4 family alpha, files, helpers
  invalid_multipart: bad(
    "Некорректное multipart-тело загрузки.",
    "Отправьте одну часть file и не более одного поля purpose.",
  ),
  file_not_found: {
    status: 404,
    type: "not_found_error",
    message: "Файл не найден или срок его хранения истёк.",
    action: "Загрузите файл заново.",
  },
  invalid_managed_service_request: bad(
    "Некорректный запрос к вспомогательному сервису.",
    "Отправьте JSON ровно с одним ожидаемым полем.",
  ),
  managed_service_unavailable: {
    status: 503,
    type: "api_error",
    retryAfter: 1,
    message: "Страница больше 2 МиБ и не может быть загружена.",
    action: "Выберите другой адрес; повтор того же адреса не поможет.",
  },
  // §4.4/§8.3 search and fetch: codes the spec leaves open (documented in src/web/README.md)
  managed_service_destination_rejected: bad(
    "Адрес страницы отклонён: допускаются только публичные домены по http или https на портах 80 и 443.",
    "Укажите публичный адрес страницы; внутренние адреса, IP-адреса и служебные имена недоступны.",
  ),
  managed_service_unsupported_content: {
    status: 415,
    type: "invalid_request_error",
    message: "Тип содержимого страницы не поддерживается.",
    action: "Загрузите страницу HTML или простой текст; PDF загрузите через /v1/files.",
  },
  managed_service_fetch_failed: {
    status: 502,
    type: "api_error",
    message: "Не удалось загрузить страницу.",
    action: "Проверьте адрес страницы; повтор поможет, только если сбой был временным.",
  },
  managed_service_timeout: {
    status: 504,
    type: "timeout_error",
    message: "Страница не ответила вовремя.",
    action: "Повторите запрос позже или выберите другой адрес.",
  },
  // §7.4 files: codes the spec leaves open (documented in src/files/README.md)
  file_empty: {
    status: 422,
    type: "invalid_request_error",
    message: "Загруженный файл пуст.",
    action: "Загрузите непустой файл.",
  },
  file_type_unsupported: {
    status: 422,
    type: "invalid_request_error",
    message: "Формат файла не поддерживается.",
    action: "Загрузите файл .pdf, .txt, .md, .json, .csv, .docx, .xlsx или .pptx.",
  },
  file_too_large: {
    status: 413,
    type: "invalid_request_error",
    message: "Файл больше 10 МиБ.",
    action: "Уменьшите файл или разделите его на части.",
  },
  file_quota_exceeded: {
    status: 422,
    type: "invalid_request_error",
    message: "Превышена квота хранилища ключа: не более 20 файлов и 50 МиБ вместе с извлечённым текстом.",
    action: "Удалите ненужные файлы через DELETE /v1/files/{file_id} и повторите загрузку.",
  },
  file_limit_exceeded: {
    status: 422,
    type: "invalid_request_error",
    message: "Документ превышает предел обработки.",
    action: "Разделите документ на части меньшего размера и загрузите их отдельно.",
  },
  file_unreadable: {
    status: 422,
    type: "invalid_request_error",
    message: "Содержимое файла не удалось прочитать как документ заявленного формата.",
    action: "Проверьте, что файл не повреждён и его расширение соответствует содержимому.",
  },
  file_references_exceeded: bad(
    "В запросе больше 20 ссылок на файлы.",
    "Оставьте в запросе не более 20 блоков input_file.",
  ),
  file_block_too_large: {
    status: 413,
    type: "invalid_request_error",
    message: "Переведённый документ больше 2 МиБ и не помещается в запрос.",
    action: "Загрузите документ частями меньшего размера.",
  },
  // §7.3 note, reason 1 of alpha's seven 429s (the others are the gateway's own: client_key_rate_limit,
  // client_ip_rate_limit, service_capacity_saturated, standard_capacity_saturated, the spend caps
  // hourly/daily_spend_limit, the reserve caps hourly/daily_reserve_limit).
  alpha_provider_rate_limit: limit(
    "Провайдер семейства alpha ограничил частоту запросов.",
    "Повторите после Retry-After; смена ключа не поможет.",
  ),
  alpha_unavailable: {
    status: 503,
    type: "api_error",
    message: "Провайдер семейства alpha временно недоступен.",
    action: "Повторите запрос с экспоненциальной задержкой.",
  },
  // §7.5 families gamma and eta
  delta_parameter_unavailable: bad(
    "Поле не входит в список поддерживаемых для этой модели.",
    "Уберите поле, указанное в param.",
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
    "Завершите один из циклов; простой повтор не поможет.",
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
    message: "Выполнение не завершилось за 600 секунд и отменено; выполненная работа оплачивается.",
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
  // §7.6 family theta
  queue_timeout: {
    status: 429,
    type: "rate_limit_error",
    retryAfter: 30,
    message: "За 30 секунд не освободился ни один аккаунт theta.",
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
    message: "Генерация ответа длилась дольше 10 минут и остановлена.",
    action: "Сократите задачу или разбейте её на части.",
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function errorSpec(code: ErrorCode): ErrorSpec {
  return ERROR_CODES[code];
}
