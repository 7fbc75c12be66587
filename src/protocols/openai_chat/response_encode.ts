/** Internal response → `chat.completion` JSON (protocols §3.5). */
import type { IRResponse } from "../../ir/response.ts";
import type { EncodeContext } from "../codec.ts";
import { toChatFinishReason } from "./finish_reason.ts";
import { toChatUsage } from "./usage.ts";

export function encodeResponse(res: IRResponse, ctx: EncodeContext): Record<string, unknown> {
  let text: string | null = null;
  let reasoning: string | null = null;
  const toolCalls: Record<string, unknown>[] = [];
  for (const block of res.content) {
    if (block.type === "text") text = (text ?? "") + block.text;
    else if (block.type === "reasoning") reasoning = (reasoning ?? "") + block.text;
    else {
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
