/**
 * Families gamma and eta beyond the field list (spec §4.6, §7.5, §8.4): provider-hosted tool items in Responses
 * input, the client tools (at most 64, valid unique names, schema ≤ 256 KiB), tool results (≤ 8 MiB, answering a
 * call of the conversation, text only) and images (none on gamma; on eta inline base64 png/jpeg/gif/webp, at
 * most 16). All checked before anything is held or sent; the tool list and the results' part types on the raw
 * body (surface decoders have looser rules and generic codes), the rest on the decoded request.
 */
import type { ModelEntry } from "../../catalog/models.ts";
import { GatewayError } from "../../errors/gateway_error.ts";
import type { IRRequest } from "../../ir/request.ts";
import type { ProtocolName } from "../../protocols/codec.ts";
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

/** Where each surface keeps a client tool's name (Chat: inside `function`); undefined for other kinds. */
function rawToolName(surface: ProtocolName, tool: unknown): unknown {
  if (!isObject(tool)) return undefined;
  if (surface === "openai_chat") return isObject(tool.function) ? tool.function.name : undefined;
  if (surface === "openai_responses") return tool.type === "function" ? tool.name : undefined;
  return tool.type === undefined || tool.type === "custom" ? tool.name : undefined;
}

/**
 * The tool list on the raw body, before a surface decoder refuses a name by its own looser rule (Messages
 * allows 128 characters) with a generic code: more than 64 tools, an invalid or repeated name →
 * `delta_client_tools_invalid` at the offending tool. Schemas are measured on the decoded request.
 */
export function checkRawTools(surface: ProtocolName, body: Record<string, unknown>): void {
  if (!Array.isArray(body.tools)) return;
  if (body.tools.length > MAX_TOOLS) {
    throw new GatewayError("delta_client_tools_invalid", {
      param: "tools",
      detail: `Инструментов ${body.tools.length}, допустимо ${MAX_TOOLS}.`,
    });
  }
  const names = new Set<unknown>();
  body.tools.forEach((tool, i) => {
    const name = rawToolName(surface, tool);
    if (name === undefined) return;
    const bad = (detail: string) =>
      new GatewayError("delta_client_tools_invalid", { param: `tools.${i}`, detail });
    if (typeof name !== "string" || !TOOL_NAME.test(name)) {
      throw bad(`Имя инструмента должно соответствовать ^[a-zA-Z0-9_-]{1,64}$.`);
    }
    if (names.has(name)) throw bad(`Имя инструмента ${name} повторяется.`);
    names.add(name);
  });
}

/** Text part types a tool result may carry, per surface. */
const RESULT_TEXT: Record<ProtocolName, ReadonlySet<string>> = {
  anthropic: new Set(["text"]),
  openai_chat: new Set(["text"]),
  openai_responses: new Set(["input_text", "output_text"]),
};

/** Each tool result of the raw body as [its parts, their param prefix] when it is a list of parts. */
function* resultParts(surface: ProtocolName, body: Record<string, unknown>): Generator<[unknown[], string]> {
  const list = surface === "openai_responses" ? body.input : body.messages;
  if (!Array.isArray(list)) return;
  for (let i = 0; i < list.length; i++) {
    const m = list[i];
    if (!isObject(m)) continue;
    if (surface === "openai_responses") {
      if (m.type === "function_call_output" && Array.isArray(m.output)) yield [m.output, `input.${i}.output`];
    } else if (surface === "openai_chat") {
      if (m.role === "tool" && Array.isArray(m.content)) yield [m.content, `messages.${i}.content`];
    } else if (Array.isArray(m.content)) {
      for (let j = 0; j < m.content.length; j++) {
        const b = m.content[j];
        if (isObject(b) && b.type === "tool_result" && Array.isArray(b.content)) {
          yield [b.content, `messages.${i}.content.${j}.content`];
        }
      }
    }
  }
}

/**
 * Tool results are text (spec §7.5 `delta_client_tool_result_unsupported`): an image, a document or any
 * other non-text part inside one is refused at that part, before a decoder would turn it into something else.
 */
export function refuseUnsupportedResults(surface: ProtocolName, body: Record<string, unknown>): void {
  const text = RESULT_TEXT[surface];
  for (const [parts, at] of resultParts(surface, body)) {
    parts.forEach((part, k) => {
      if (isObject(part) && typeof part.type === "string" && !text.has(part.type)) {
        throw new GatewayError("delta_client_tool_result_unsupported", {
          param: `${at}.${k}`,
          detail: `Часть типа ${
            part.type.slice(0, 40)
          } в результате инструмента: передавайте результат текстом.`,
        });
      }
    });
  }
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
