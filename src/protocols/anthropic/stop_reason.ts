/** Stop-reason mapping between Anthropic `stop_reason` and the internal reason (protocols §5.7). */
import type { IRStopReason } from "../../ir/events.ts";

const TO_ANTHROPIC: Record<IRStopReason, string> = {
  stop: "end_turn",
  stop_sequence: "stop_sequence",
  length: "max_tokens",
  tool_calls: "tool_use",
  content_filter: "refusal",
};

const FROM_ANTHROPIC: Record<string, IRStopReason> = {
  end_turn: "stop",
  stop_sequence: "stop_sequence",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  tool_use: "tool_calls",
  pause_turn: "stop",
  refusal: "content_filter",
};

export function toAnthropicStopReason(reason: IRStopReason): string {
  return TO_ANTHROPIC[reason];
}

/**
 * Upstream `stop_reason` → internal reason. Null or unknown values are a natural end; a natural end
 * while client tool calls were produced is reported as `tool_calls` (some servers say end_turn).
 */
export function fromAnthropicStopReason(raw: unknown, hasToolCalls = false): IRStopReason {
  const reason = (typeof raw === "string" ? FROM_ANTHROPIC[raw] : undefined) ?? "stop";
  return reason === "stop" && hasToolCalls ? "tool_calls" : reason;
}
