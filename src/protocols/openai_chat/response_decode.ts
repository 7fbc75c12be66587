/** Upstream `chat.completion` JSON → internal response (lenient, §3.5). */
import type { IROutputBlock, IRResponse } from "../../ir/response.ts";
import { UpstreamProtocolError } from "../codec.ts";
import { fromChatFinishReason } from "./finish_reason.ts";
import { fallbackCallId } from "./stream_decode.ts";
import { fullChatUsage } from "./usage.ts";
import { isObject, type Obj } from "./validate.ts";

/** `content` as a string, or an array of text-like parts some providers return. */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((p) => isObject(p) && typeof p.text === "string" ? p.text : "").join("");
}

function reasoningText(message: Obj): string {
  if (typeof message.reasoning_content === "string") return message.reasoning_content;
  if (typeof message.reasoning === "string") return message.reasoning;
  return "";
}

function toolCallBlocks(raw: unknown, responseId: string): IROutputBlock[] {
  if (!Array.isArray(raw)) return [];
  const out: IROutputBlock[] = [];
  raw.forEach((tc, i) => {
    if (!isObject(tc) || !isObject(tc.function)) return;
    const fn = tc.function;
    const args = fn.arguments;
    out.push({
      type: "tool_call",
      id: typeof tc.id === "string" && tc.id !== "" ? tc.id : fallbackCallId(responseId, i),
      name: typeof fn.name === "string" ? fn.name : "",
      arguments: typeof args === "string"
        ? args
        : args === undefined || args === null
        ? ""
        : JSON.stringify(args),
    });
  });
  return out;
}

export function decodeResponse(json: unknown): IRResponse {
  if (!isObject(json) || !Array.isArray(json.choices)) {
    throw new UpstreamProtocolError("chat completion without a choices array");
  }
  const choice = json.choices.find((c) => isObject(c) && c.index === 0) ?? json.choices[0];
  if (!isObject(choice) || !isObject(choice.message)) {
    throw new UpstreamProtocolError("chat completion without choices[0].message");
  }
  const message = choice.message;
  const content: IROutputBlock[] = [];
  const reasoning = reasoningText(message);
  if (reasoning !== "") content.push({ type: "reasoning", text: reasoning });
  const text = contentText(message.content);
  if (text !== "") content.push({ type: "text", text });
  const refusal = typeof message.refusal === "string" && message.refusal !== "" ? message.refusal : undefined;
  if (refusal !== undefined) content.push({ type: "text", text: refusal });
  const id = typeof json.id === "string" ? json.id : "";
  const calls = toolCallBlocks(message.tool_calls, id);
  content.push(...calls);
  const res: IRResponse = {
    id,
    model: typeof json.model === "string" ? json.model : "",
    content,
    stopReason: refusal !== undefined
      ? "content_filter"
      : fromChatFinishReason(choice.finish_reason, calls.length > 0),
  };
  if (isObject(json.usage)) res.usage = fullChatUsage(json.usage);
  return res;
}
