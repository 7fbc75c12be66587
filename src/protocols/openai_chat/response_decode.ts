/** Upstream `chat.completion` JSON → internal response (lenient, protocols §3.5), read through ./wire.ts. */
import type { IROutputBlock, IRResponse } from "../../ir/response.ts";
import { isObject } from "../../util/json.ts";
import { UpstreamProtocolError } from "../codec.ts";
import { readWire } from "../wire_frame.ts";
import { fromChatFinishReason } from "./finish_reason.ts";
import { fallbackCallId } from "./stream_decode.ts";
import { citesUrl, searchesOf } from "./url_citation.ts";
import { fullChatUsage } from "./usage.ts";
import { CompletionToolCall, readCompletion, readCompletionChoice } from "./wire.ts";

/** `content` as a string, or an array of text-like parts some providers return. */
function contentText(content: string | unknown[] | null | undefined): string {
  if (typeof content === "string") return content;
  if (!content) return "";
  return content.map((p) => isObject(p) && typeof p.text === "string" ? p.text : "").join("");
}

function toolCallBlocks(raw: unknown[] | null | undefined, responseId: string): IROutputBlock[] {
  return (raw ?? []).map((item, i) => {
    const tc = readWire("openai_chat", "completion tool call", CompletionToolCall, item);
    const args = tc.function.arguments;
    return {
      type: "tool_call",
      id: tc.id ? tc.id : fallbackCallId(responseId, i),
      name: tc.function.name ?? "",
      arguments: typeof args === "string"
        ? args
        : args === undefined || args === null
        ? ""
        : JSON.stringify(args),
    };
  });
}

export function decodeResponse(json: unknown): IRResponse {
  const c = readCompletion(json);
  if (!c) throw new UpstreamProtocolError("chat completion without a choices array");
  const raw = c.choices.find((x) => isObject(x) && x.index === 0) ?? c.choices[0];
  const choice = readCompletionChoice(raw);
  if (!choice) throw new UpstreamProtocolError("chat completion without choices[0].message");
  const message = choice.message;
  const content: IROutputBlock[] = [];
  const reasoning = message.reasoning_content ?? message.reasoning ?? "";
  if (reasoning !== "") content.push({ type: "reasoning", text: reasoning });
  const text = contentText(message.content);
  if (text !== "") content.push({ type: "text", text });
  const refusal = message.refusal ? message.refusal : undefined;
  if (refusal !== undefined) content.push({ type: "text", text: refusal });
  const id = c.id ?? "";
  const calls = toolCallBlocks(message.tool_calls, id);
  content.push(...calls);
  const res: IRResponse = {
    id,
    model: c.model ?? "",
    content,
    stopReason: refusal !== undefined
      ? "content_filter"
      : fromChatFinishReason(choice.finish_reason, calls.length > 0),
  };
  if (c.usage) {
    const usage = fullChatUsage(c.usage);
    usage.webSearchRequests = searchesOf(usage.webSearchRequests, citesUrl(message.annotations));
    res.usage = usage;
  }
  return res;
}
