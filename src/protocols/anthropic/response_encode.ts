/** Internal response → Messages JSON for Anthropic clients (protocols §2.6). */
import type { IROutputBlock, IRResponse } from "../../ir/response.ts";
import { emptyUsage } from "../../ir/usage.ts";
import type { EncodeContext } from "../codec.ts";
import { parseToolInput } from "./messages_encode.ts";
import { toAnthropicStopReason } from "./stop_reason.ts";
import { sanitizeToolId } from "./tool_id.ts";
import { usageToAnthropic } from "./usage.ts";

function contentBlock(b: IROutputBlock, ctx: EncodeContext): Record<string, unknown> | undefined {
  switch (b.type) {
    case "text": // citations come only from an Anthropic upstream, relayed natively to Messages clients
      return b.text ? { type: "text", text: b.text } : undefined;
    case "reasoning":
      return { type: "thinking", thinking: b.text, signature: b.signature ?? "" };
    case "tool_call":
      return {
        type: "tool_use",
        id: b.id ? sanitizeToolId(b.id) : ctx.newId("toolu_"),
        name: b.name,
        input: parseToolInput(b.arguments),
      };
    case "server_tool": // see case "text"
      return undefined;
  }
}

export function encodeResponse(res: IRResponse, ctx: EncodeContext): Record<string, unknown> {
  return {
    id: ctx.newId("msg_"),
    type: "message",
    role: "assistant",
    model: ctx.model,
    content: res.content.map((b) => contentBlock(b, ctx)).filter((b) => b !== undefined),
    stop_reason: toAnthropicStopReason(res.stopReason),
    stop_sequence: res.stopSequence ?? null,
    usage: usageToAnthropic(res.usage ?? emptyUsage()),
  };
}
