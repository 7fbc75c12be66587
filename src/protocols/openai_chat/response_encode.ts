/**
 * Internal response → `chat.completion` JSON (protocols §3.5). A provider-run tool has no Chat form (protocols
 * §5.3): only the text stays, its citations as `message.annotations` (`url_citation` over each cited block's
 * span of `content`, url_citation.ts), present only when there are some.
 */
import type { IRResponse } from "../../ir/response.ts";
import type { EncodeContext } from "../codec.ts";
import { toChatFinishReason } from "./finish_reason.ts";
import { chatAnnotations } from "./url_citation.ts";
import { toChatUsage } from "./usage.ts";

export function encodeResponse(res: IRResponse, ctx: EncodeContext): Record<string, unknown> {
  let text: string | null = null;
  let reasoning: string | null = null;
  const toolCalls: Record<string, unknown>[] = [];
  const annotations: Record<string, unknown>[] = [];
  for (const block of res.content) {
    if (block.type === "text") {
      const start = text?.length ?? 0;
      text = (text ?? "") + block.text;
      if (block.citations) annotations.push(...chatAnnotations(block.citations, start, text.length));
    } else if (block.type === "reasoning") reasoning = (reasoning ?? "") + block.text;
    else if (block.type === "tool_call") {
      toolCalls.push({
        id: block.id,
        type: "function",
        function: { name: block.name, arguments: block.arguments === "" ? "{}" : block.arguments },
      });
    }
  }
  const message: Record<string, unknown> = { role: "assistant", content: text, refusal: null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (reasoning !== null) message.reasoning_content = reasoning;
  if (annotations.length > 0) message.annotations = annotations;
  const out: Record<string, unknown> = {
    id: ctx.newId("chatcmpl-"),
    object: "chat.completion",
    created: ctx.now(),
    model: ctx.model,
    choices: [{
      index: 0,
      message,
      logprobs: null,
      finish_reason: toChatFinishReason(res.stopReason, toolCalls.length > 0),
    }],
  };
  if (res.usage) out.usage = toChatUsage(res.usage);
  return out;
}
