/** Family alpha, its files store and its web helpers (spec §7.4, and the codes the spec leaves open there). */
import { bad, type ErrorSpec, limit } from "./error_spec.ts";

export const ALPHA_CODES = {
  // spec §7.4 family alpha, files, helpers
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
  // spec §4.4/spec §8.3 search and fetch: codes the spec leaves open (documented in docs/web.md)
  managed_service_destination_rejected: bad(
    "Адрес страницы отклонён: допускаются только публичные домены по http или https на портах 80 и 443.",
    "Укажите публичный адрес страницы; внутренние адреса, IP-адреса и служебные имена недоступны.",
  ),
  search_query_too_long: bad(
    "Запрос длиннее, чем принимает поисковый сервис этого шлюза.",
    "Сократите запрос до предела, указанного в сообщении.",
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
  // spec §7.4 files: codes the spec leaves open (documented in docs/files.md)
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
  // spec §7.3 note, reason 1 of alpha's seven 429s (the others are the gateway's own: client_key_rate_limit,
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
} as const satisfies Record<string, ErrorSpec>;
