/** Chat Completions `finish_reason` ↔ internal stop reason (protocols §5.7). */
import type { IRStopReason } from "../../ir/events.ts";

export type ChatFinishReason = "stop" | "length" | "tool_calls" | "content_filter";

const TO_CHAT: Record<IRStopReason, ChatFinishReason> = {
  stop: "stop",
  stop_sequence: "stop",
  length: "length",
  tool_calls: "tool_calls",
  content_filter: "content_filter",
};

const FROM_CHAT: Record<string, IRStopReason> = {
  stop: "stop",
  length: "length",
  tool_calls: "tool_calls",
  function_call: "tool_calls",
  content_filter: "content_filter",
};

/**
 * The client-facing finish reason. Some upstreams say `stop` while tool calls are present (protocols §5.7):
 * a natural end with tool calls is reported as `tool_calls`; `length` stays (truncated calls).
 */
export function toChatFinishReason(reason: IRStopReason, hasToolCalls: boolean): ChatFinishReason {
  if (hasToolCalls && (reason === "stop" || reason === "stop_sequence")) return "tool_calls";
  return TO_CHAT[reason];
}

/** Upstream finish_reason → internal; unknown or null values count as a natural stop. */
export function fromChatFinishReason(reason: unknown, hasToolCalls: boolean): IRStopReason {
  const mapped = typeof reason === "string" ? FROM_CHAT[reason] ?? "stop" : "stop";
  return hasToolCalls && mapped === "stop" ? "tool_calls" : mapped;
}
