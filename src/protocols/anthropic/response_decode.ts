/** Upstream Messages JSON → internal response. Lenient, except that it must be a message. */
import type { IROutputBlock, IRResponse } from "../../ir/response.ts";
import { UpstreamProtocolError } from "../codec.ts";
import { fromAnthropicStopReason } from "./stop_reason.ts";
import { usageFromAnthropic } from "./usage.ts";

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

/** Content blocks the client protocols can show; server-tool and redacted blocks are dropped. */
function outputBlock(b: unknown): IROutputBlock | undefined {
  if (!isObject(b)) return undefined;
  switch (b.type) {
    case "text":
      return { type: "text", text: str(b.text) };
    case "thinking": {
      const signature = str(b.signature);
      return signature
        ? { type: "reasoning", text: str(b.thinking), signature }
        : { type: "reasoning", text: str(b.thinking) };
    }
    case "tool_use":
      return {
        type: "tool_call",
        id: str(b.id),
        name: str(b.name),
        arguments: JSON.stringify(isObject(b.input) ? b.input : {}),
      };
    default:
      return undefined;
  }
}

export function decodeResponse(json: unknown): IRResponse {
  if (
    !isObject(json) || (json.type !== undefined && json.type !== "message") || !Array.isArray(json.content)
  ) {
    throw new UpstreamProtocolError("Anthropic upstream answered something that is not a message object");
  }
  const content = json.content.map(outputBlock).filter((b): b is IROutputBlock => b !== undefined);
  const hasToolCalls = content.some((b) => b.type === "tool_call");
  const res: IRResponse = {
    id: str(json.id),
    model: str(json.model),
    content,
    stopReason: fromAnthropicStopReason(json.stop_reason, hasToolCalls),
  };
  if (typeof json.stop_sequence === "string") res.stopSequence = json.stop_sequence;
  const usage = usageFromAnthropic(json.usage);
  if (usage) res.usage = usage;
  return res;
}
