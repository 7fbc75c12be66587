import assert from "node:assert/strict";
import { encodeResponse } from "./response_encode.ts";
import { testCtx } from "./test_helpers.ts";

Deno.test("encodes reasoning, merged text and function calls in content order with echo fields", () => {
  const ctx = testCtx({
    maxOutputTokens: 500,
    tools: [{ name: "f", parameters: { type: "object" } }],
    toolChoice: { type: "required" },
    temperature: 0.3,
    reasoningEffort: "low",
  });
  const out = encodeResponse({
    id: "msg_upstream",
    model: "upstream-model",
    content: [
      { type: "reasoning", text: "hmm", signature: "sig" },
      { type: "text", text: "Hello " },
      { type: "text", text: "there" },
      { type: "tool_call", id: "toolu_9", name: "f", arguments: "" },
    ],
    stopReason: "tool_calls",
    usage: {
      inputTokens: 100,
      cachedInputTokens: 60,
      cacheWriteTokens: 10,
      outputTokens: 20,
      reasoningTokens: 5,
      webSearchRequests: 0,
    },
  }, ctx);
  assert.deepEqual(out, {
    id: "resp_1",
    object: "response",
    created_at: 1_700_000_000,
    status: "completed",
    background: false,
    completed_at: 1_700_000_000,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: 500,
    model: "client-model",
    output: [
      { id: "rs_2", type: "reasoning", summary: [{ type: "summary_text", text: "hmm" }] },
      {
        id: "msg_3",
        type: "message",
        status: "completed",
        content: [{ type: "output_text", annotations: [], logprobs: [], text: "Hello there" }],
        role: "assistant",
      },
      {
        id: "fc_4",
        type: "function_call",
        status: "completed",
        arguments: "{}",
        call_id: "toolu_9",
        name: "f",
      },
    ],
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: "low", summary: null },
    store: false,
    temperature: 0.3,
    text: { format: { type: "text" } },
    tool_choice: "required",
    tools: [{ type: "function", name: "f", parameters: { type: "object" }, strict: false }],
    top_p: 1,
    truncation: "disabled",
    usage: {
      input_tokens: 100,
      input_tokens_details: { cached_tokens: 60 },
      output_tokens: 20,
      output_tokens_details: { reasoning_tokens: 5 },
      total_tokens: 120,
    },
    user: null,
    metadata: {},
  });
});

Deno.test("length → incomplete with max_output_tokens; missing usage → zeros", () => {
  const out = encodeResponse(
    { id: "x", model: "m", content: [{ type: "text", text: "cut" }], stopReason: "length" },
    testCtx(),
  );
  assert.equal(out.status, "incomplete");
  assert.equal(out.completed_at, null);
  assert.deepEqual(out.incomplete_details, { reason: "max_output_tokens" });
  assert.equal((out.output as { status: string }[])[0]!.status, "incomplete");
  assert.deepEqual(out.usage, {
    input_tokens: 0,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 0,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 0,
  });
  const filtered = encodeResponse(
    { id: "x", model: "m", content: [], stopReason: "content_filter" },
    testCtx(),
  );
  assert.deepEqual(filtered.incomplete_details, { reason: "content_filter" });
  assert.deepEqual(filtered.output, []);
});
