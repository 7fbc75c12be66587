/** Bodies of the two helpers (spec §4.4, §8.3): a JSON object with exactly one expected string field. */
import { GatewayError } from "../errors/gateway_error.ts";
import { readJsonObject } from "../request/body.ts";

/** Helper bodies are tiny; 64 KiB leaves room for a 16 KiB query written entirely in \u escapes. */
export const HELPER_BODY_LIMIT = 64 * 1024;

export function invalid(param: string | null, detail: string): GatewayError {
  return new GatewayError("invalid_managed_service_request", { param, detail });
}

/** Reads `{<field>: string}`; anything else is 400 invalid_managed_service_request. */
export async function readSingleField(req: Request, field: string): Promise<string> {
  let body: Record<string, unknown>;
  try {
    body = await readJsonObject(req, HELPER_BODY_LIMIT);
  } catch (err) {
    if (err instanceof GatewayError && (err.code === "invalid_json" || err.code === "invalid_body_type")) {
      throw invalid(null, err.detail ?? "Тело должно быть JSON-объектом.");
    }
    if (err instanceof GatewayError && err.code === "request_body_unreadable") {
      throw invalid(null, "Тело запроса не удалось прочитать (нарушено HTTP-кадрирование).");
    }
    throw err;
  }
  const keys = Object.keys(body);
  const extra = keys.find((k) => k !== field);
  if (extra !== undefined) throw invalid(extra, `Лишнее поле ${extra}: ожидается только ${field}.`);
  if (keys.length === 0) throw invalid(field, `Нет поля ${field}.`);
  const value = body[field];
  if (typeof value !== "string") throw invalid(field, `Поле ${field} должно быть строкой.`);
  return value;
}
