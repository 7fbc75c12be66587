import assert from "node:assert/strict";
import { encodeResponse } from "./response_encode.ts";
import { testContext } from "./testing/helpers.ts";

Deno.test("encodeResponse renders a Messages object with the client's model and a fresh id", () => {
  const body = encodeResponse({
    id: "chatcmpl-1",
    model: "upstream-model",
    content: [
      { type: "reasoning", text: "thinking…" },
      { type: "text", text: "" },
      { type: "text", text: "Calling." },
      { type: "tool_call", id: "call_1", name: "f", arguments: '{"a":1}' },
      { type: "tool_call", id: "", name: "g", arguments: "{broken" },
    ],
    stopReason: "tool_calls",
    usage: {
      inputTokens: 1000,
      cachedInputTokens: 800,
      cacheWriteTokens: 100,
      outputTokens: 20,
      reasoningTokens: 5,
      webSearchRequests: 0,
    },
  }, testContext());
  assert.deepEqual(body, {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "alpha-large",
    content: [
      { type: "thinking", thinking: "thinking…", signature: "" },
      { type: "text", text: "Calling." },
      { type: "tool_use", id: "call_1", name: "f", input: { a: 1 } },
      { type: "tool_use", id: "toolu_2", name: "g", input: {} },
    ],
    stop_reason: "tool_use",
    stop_sequence: null,
    usage: {
      input_tokens: 100,
      output_tokens: 20,
      cache_read_input_tokens: 800,
      cache_creation_input_tokens: 100,
    },
  });
});

Deno.test("encodeResponse maps every stop reason and reports zero usage when none is known", () => {
  const reasons = [
    ["stop", "end_turn"],
    ["stop_sequence", "stop_sequence"],
    ["length", "max_tokens"],
    ["tool_calls", "tool_use"],
    ["content_filter", "refusal"],
  ] as const;
  for (const [ir, wire] of reasons) {
    const body = encodeResponse(
      { id: "x", model: "m", content: [], stopReason: ir, stopSequence: "S" },
      testContext(),
    );
    assert.equal(body.stop_reason, wire);
    assert.equal(body.stop_sequence, "S");
    assert.deepEqual(body.usage, {
      input_tokens: 0,
      output_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    });
  }
});
