/** Upstream Messages JSON → internal response (protocols §2.6), read through ./wire.ts. Lenient, except that it must be a message. */
import type { z } from "zod";
import type { IROutputBlock, IRResponse } from "../../ir/response.ts";
import { UpstreamProtocolError } from "../codec.ts";
import { readWire } from "../wire_frame.ts";
import { fromAnthropicStopReason } from "./stop_reason.ts";
import { usageFromAnthropic } from "./usage.ts";
import { Message, TextBlock, ThinkingBlock, ToolUseBlock, type Typed } from "./wire.ts";

/** Content blocks the client protocols can show; server-tool and redacted blocks are dropped. */
function outputBlock(b: z.output<typeof Typed>): IROutputBlock | undefined {
  switch (b.type) {
    case "text":
      return { type: "text", text: readWire("anthropic", "text block", TextBlock, b).text ?? "" };
    case "thinking": {
      const t = readWire("anthropic", "thinking block", ThinkingBlock, b);
      return t.signature
        ? { type: "reasoning", text: t.thinking ?? "", signature: t.signature }
        : { type: "reasoning", text: t.thinking ?? "" };
    }
    case "tool_use": {
      const t = readWire("anthropic", "tool_use block", ToolUseBlock, b);
      return { type: "tool_call", id: t.id, name: t.name, arguments: JSON.stringify(t.input ?? {}) };
    }
    default:
      return undefined;
  }
}

export function decodeResponse(json: unknown): IRResponse {
  const parsed = Message.safeParse(json);
  if (!parsed.success) {
    throw new UpstreamProtocolError("Anthropic upstream answered something that is not a message object");
  }
  const m = parsed.data;
  const content = m.content.map(outputBlock).filter((b): b is IROutputBlock => b !== undefined);
  const hasToolCalls = content.some((b) => b.type === "tool_call");
  const res: IRResponse = {
    id: m.id ?? "",
    model: m.model ?? "",
    content,
    stopReason: fromAnthropicStopReason(m.stop_reason, hasToolCalls),
  };
  if (typeof m.stop_sequence === "string") res.stopSequence = m.stop_sequence;
  const usage = usageFromAnthropic(m.usage);
  if (usage) res.usage = usage;
  return res;
}
