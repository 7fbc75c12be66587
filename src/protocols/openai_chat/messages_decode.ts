/** Chat `messages` (client side) → internal system list and messages. */
import type { IRMessage, IRPart } from "../../ir/request.ts";
import { decodeContent, decodeTextContent } from "./content_decode.ts";
import { isObject, type JsonObject } from "../../util/json.ts";
import { fail, optString } from "./validate.ts";

export interface DecodedMessages {
  system: string[];
  messages: IRMessage[];
}

function decodeToolCalls(raw: unknown, param: string): IRPart[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) fail(param);
  return raw.map((tc, i): IRPart => {
    const p = `${param}.${i}`;
    if (!isObject(tc)) fail(p);
    if (typeof tc.id !== "string" || tc.id === "") fail(`${p}.id`);
    if (tc.type !== "function") fail(`${p}.type`);
    const fn = tc.function;
    if (!isObject(fn)) fail(`${p}.function`);
    if (typeof fn.name !== "string" || fn.name === "") fail(`${p}.function.name`);
    if (typeof fn.arguments !== "string") fail(`${p}.function.arguments`);
    return { type: "tool_call", id: tc.id, name: fn.name, arguments: fn.arguments };
  });
}

function decodeAssistant(m: JsonObject, param: string): IRMessage {
  const parts: IRPart[] = [];
  const reasoning = optString(m, "reasoning_content", `${param}.reasoning_content`);
  if (reasoning) parts.push({ type: "reasoning", text: reasoning });
  const content = m.content;
  if (content !== undefined && content !== null && content !== "") {
    parts.push(...decodeContent(content, "assistant", `${param}.content`));
  }
  const calls = decodeToolCalls(m.tool_calls, `${param}.tool_calls`);
  parts.push(...calls);
  if (calls.length === 0 && (content === undefined || content === null)) fail(`${param}.content`);
  return { role: "assistant", parts };
}

function decodeTool(m: JsonObject, param: string): IRPart {
  if (typeof m.tool_call_id !== "string" || m.tool_call_id === "") fail(`${param}.tool_call_id`);
  return {
    type: "tool_result",
    callId: m.tool_call_id,
    content: decodeTextContent(m.content, `${param}.content`),
  };
}

/**
 * system/developer → `system` (in order, mid-conversation ones too); user and assistant → messages;
 * consecutive tool messages → tool_result parts of one user message.
 */
export function decodeMessages(raw: unknown): DecodedMessages {
  if (!Array.isArray(raw) || raw.length === 0) fail("messages");
  const out: DecodedMessages = { system: [], messages: [] };
  let toolGroup: IRPart[] | undefined;
  raw.forEach((m, i) => {
    const param = `messages.${i}`;
    if (!isObject(m)) fail(param);
    if (m.role !== "tool") toolGroup = undefined;
    switch (m.role) {
      case "system":
      case "developer":
        out.system.push(decodeTextContent(m.content, `${param}.content`));
        break;
      case "user":
        out.messages.push({ role: "user", parts: decodeContent(m.content, "user", `${param}.content`) });
        break;
      case "assistant":
        out.messages.push(decodeAssistant(m, param));
        break;
      case "tool":
        if (!toolGroup) {
          toolGroup = [];
          out.messages.push({ role: "user", parts: toolGroup });
        }
        toolGroup.push(decodeTool(m, param));
        break;
      default:
        fail(`${param}.role`);
    }
  });
  return out;
}
