/**
 * Families gamma and eta beyond the field list (spec §4.6, §7.5, §8.4): provider-hosted tool items in Responses
 * input, the client tools (at most 64, valid unique names, schema ≤ 256 KiB), tool results (≤ 8 MiB, answering a
 * call of the conversation) and images (none on gamma; on eta inline base64 png/jpeg/gif/webp, at most 16).
 * All checked before anything is held or sent.
 */
import type { ModelEntry } from "../../catalog/models.ts";
import { GatewayError } from "../../errors/gateway_error.ts";
import type { IRRequest } from "../../ir/request.ts";
import { isObject } from "../../util/json.ts";

export const MAX_TOOLS = 64;
export const MAX_SCHEMA_BYTES = 256 * 1024;
export const MAX_TOOL_RESULT_BYTES = 8 * 1024 * 1024;
export const MAX_IMAGES = 16;
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
/** Responses input items the client may send; any other `*_call` / `*_call_output` item is a hosted tool's. */
const CLIENT_ITEMS = new Set(["message", "function_call", "function_call_output", "reasoning"]);

/** Responses `input` items of provider-hosted tools (web_search_call, file_search_call, computer_call, …). */
export function refuseHostedItems(body: Record<string, unknown>): void {
  if (!Array.isArray(body.input)) return;
  body.input.forEach((item, i) => {
    if (isObject(item) && typeof item.type === "string" && !CLIENT_ITEMS.has(item.type)) {
      throw new GatewayError("delta_client_tools_unavailable", { param: `input.${i}` });
    }
  });
}

/** Whether `s` is longer than `max` UTF-8 bytes; encodes only when the length alone cannot tell. */
const overBytes = (s: string, max: number): boolean =>
  s.length > max || (s.length * 3 > max && new TextEncoder().encode(s).length > max);

function checkTools(ir: IRRequest): void {
  const invalid = (detail: string) =>
    new GatewayError("delta_client_tools_invalid", { param: "tools", detail });
  if (ir.tools.length > MAX_TOOLS) throw invalid(`Инструментов ${ir.tools.length}, допустимо ${MAX_TOOLS}.`);
  const names = new Set<string>();
  for (const t of ir.tools) {
    if (!TOOL_NAME.test(t.name)) throw invalid(`Имя инструмента «${t.name.slice(0, 80)}» не подходит.`);
    if (names.has(t.name)) throw invalid(`Имя инструмента ${t.name} повторяется.`);
    names.add(t.name);
    if (overBytes(JSON.stringify(t.parameters), MAX_SCHEMA_BYTES)) {
      throw invalid(`Схема инструмента ${t.name} больше 256 КиБ.`);
    }
  }
}

function checkParts(model: ModelEntry, ir: IRRequest): void {
  const calls = new Set<string>();
  let images = 0;
  for (const m of ir.messages) {
    for (const p of m.parts) {
      if (p.type === "tool_call") calls.add(p.id);
      else if (p.type === "tool_result") {
        if (overBytes(p.content, MAX_TOOL_RESULT_BYTES)) {
          throw new GatewayError("delta_client_tool_result_too_large");
        }
        if (!calls.has(p.callId)) {
          throw new GatewayError("delta_client_tool_result_invalid", {
            detail: `Нет вызова инструмента ${p.callId.slice(0, 80)} перед его результатом.`,
          });
        }
      } else if (p.type === "image") {
        if (model.family === "gamma") throw new GatewayError("delta_image_input_unavailable");
        images++;
        if (p.data === undefined || !IMAGE_TYPES.has(p.mediaType ?? "") || images > MAX_IMAGES) {
          throw new GatewayError("delta_image_input_invalid");
        }
      }
    }
  }
}

/** The decoded request's rules; throws the first refusal. */
export function checkDeltaRequest(model: ModelEntry, ir: IRRequest): void {
  checkTools(ir);
  checkParts(model, ir);
}
