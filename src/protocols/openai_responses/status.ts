/** Stop reasons ↔ Responses `status` + `incomplete_details.reason` (protocols §5.7). */
import type { IRStopReason } from "../../ir/events.ts";
import { isObject } from "../../util/json.ts";

export type TerminalStatus = "completed" | "incomplete";

export interface WireStatus {
  status: TerminalStatus;
  /** `incomplete_details.reason`, null when completed. */
  incompleteReason: "max_output_tokens" | "content_filter" | null;
}

/** IR stop reason → the status a Responses client sees. */
export function statusFromStopReason(reason: IRStopReason): WireStatus {
  switch (reason) {
    case "length":
      return { status: "incomplete", incompleteReason: "max_output_tokens" };
    case "content_filter":
      return { status: "incomplete", incompleteReason: "content_filter" };
    default:
      return { status: "completed", incompleteReason: null };
  }
}

/**
 * Upstream terminal status → IR stop reason. `completed` is `tool_calls` when function calls were
 * produced (never trust a status alone, protocols §5.7), `content_filter` when the model refused, else `stop`.
 */
export function stopReasonFromStatus(
  status: unknown,
  incompleteDetails: unknown,
  hasToolCalls: boolean,
  refused = false,
): IRStopReason {
  if (status === "incomplete") {
    const reason = isObject(incompleteDetails) ? incompleteDetails.reason : undefined;
    return reason === "content_filter" ? "content_filter" : "length";
  }
  if (hasToolCalls) return "tool_calls";
  return refused ? "content_filter" : "stop";
}
