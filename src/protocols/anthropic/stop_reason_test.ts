import assert from "node:assert/strict";
import { fromAnthropicStopReason, toAnthropicStopReason } from "./stop_reason.ts";

Deno.test("fromAnthropicStopReason follows protocols §5.7", () => {
  const table: [unknown, string][] = [
    ["end_turn", "stop"],
    ["stop_sequence", "stop_sequence"],
    ["max_tokens", "length"],
    ["model_context_window_exceeded", "length"],
    ["tool_use", "tool_calls"],
    ["pause_turn", "stop"],
    ["refusal", "content_filter"],
    [null, "stop"],
    ["something_new", "stop"],
  ];
  for (const [wire, ir] of table) assert.equal(fromAnthropicStopReason(wire), ir, String(wire));
  assert.equal(fromAnthropicStopReason("end_turn", true), "tool_calls");
  assert.equal(fromAnthropicStopReason("max_tokens", true), "length");
});

Deno.test("toAnthropicStopReason maps every internal reason", () => {
  assert.deepEqual(
    (["stop", "stop_sequence", "length", "tool_calls", "content_filter"] as const).map(toAnthropicStopReason),
    ["end_turn", "stop_sequence", "max_tokens", "tool_use", "refusal"],
  );
});
