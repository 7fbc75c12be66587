/** Upstream Messages JSON → internal response (protocols §2.6), read through ./wire.ts. Lenient, except that it must be a message. */
import type { z } from "zod";
import type { IROutputBlock, IRResponse } from "../../ir/response.ts";
import { UpstreamProtocolError } from "../codec.ts";
import { readWire } from "../wire_frame.ts";
import { fromAnthropicStopReason } from "./stop_reason.ts";
import { usageFromAnthropic } from "./usage.ts";
import { citations, isServerToolResult, type PendingCall, serverTool } from "./server_blocks.ts";
import { Message, TextBlock, ThinkingBlock, ToolUseBlock, type Typed } from "./wire.ts";

/**
 * Content blocks the client protocols can show. A `server_tool_use` waits in `calls` for its result block,
 * which gives the one server_tool block (server_blocks.ts); redacted and other blocks are dropped.
 */
function outputBlock(b: z.output<typeof Typed>, calls: Map<string, PendingCall>): IROutputBlock | undefined {
  switch (b.type) {
    case "text": {
      const t = readWire("anthropic", "text block", TextBlock, b);
      const cites = citations(t.citations);
      return cites.length > 0
        ? { type: "text", text: t.text ?? "", citations: cites }
        : { type: "text", text: t.text ?? "" };
    }
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
    case "server_tool_use": {
      const t = readWire("anthropic", "server_tool_use block", ToolUseBlock, b);
      calls.set(t.id, { name: t.name, input: t.input ?? {} });
      return undefined;
    }
    default:
      return isServerToolResult(b.type) ? { type: "server_tool", ...serverTool(b, calls) } : undefined;
  }
}

export function decodeResponse(json: unknown): IRResponse {
  const parsed = Message.safeParse(json);
  if (!parsed.success) {
    throw new UpstreamProtocolError("Anthropic upstream answered something that is not a message object");
  }
  const m = parsed.data;
  const calls = new Map<string, PendingCall>();
  const content = m.content.map((b) => outputBlock(b, calls)).filter((b): b is IROutputBlock =>
    b !== undefined
  );
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
