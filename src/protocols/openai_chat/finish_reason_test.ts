import assert from "node:assert/strict";
import type { IRStopReason } from "../../ir/events.ts";
import { fromChatFinishReason, toChatFinishReason } from "./finish_reason.ts";

Deno.test("toChatFinishReason maps every internal reason", () => {
  const table: [IRStopReason, boolean, string][] = [
    ["stop", false, "stop"],
    ["stop_sequence", false, "stop"],
    ["length", false, "length"],
    ["tool_calls", false, "tool_calls"],
    ["content_filter", false, "content_filter"],
    ["stop", true, "tool_calls"],
    ["stop_sequence", true, "tool_calls"],
    ["length", true, "length"],
  ];
  for (const [reason, tools, want] of table) assert.equal(toChatFinishReason(reason, tools), want, reason);
});

Deno.test("fromChatFinishReason maps upstream values leniently", () => {
  const table: [unknown, boolean, IRStopReason][] = [
    ["stop", false, "stop"],
    ["length", false, "length"],
    ["tool_calls", false, "tool_calls"],
    ["function_call", false, "tool_calls"],
    ["content_filter", false, "content_filter"],
    ["eos", false, "stop"],
    [null, false, "stop"],
    ["stop", true, "tool_calls"],
    ["length", true, "length"],
  ];
  for (const [reason, tools, want] of table) {
    assert.equal(fromChatFinishReason(reason, tools), want, String(reason));
  }
});
