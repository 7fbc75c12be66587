import assert from "node:assert/strict";
import { UpstreamProtocolError } from "../codec.ts";
import { decodeResponse } from "./response_decode.ts";

Deno.test("decodeResponse reads the recorded chat.completion shape", () => {
  const res = decodeResponse({
    id: "chatcmpl-D8Z5oo6uDh67AD85p73ksdT1KxhE0",
    object: "chat.completion",
    created: 1770933892,
    model: "gpt-4.1-nano-2025-04-14",
    choices: [{
      index: 0,
      message: { role: "assistant", content: "Hello!", refusal: null, annotations: [] },
      logprobs: null,
      finish_reason: "stop",
    }],
    usage: {
      prompt_tokens: 16,
      completion_tokens: 300,
      total_tokens: 316,
      prompt_tokens_details: { cached_tokens: 2, audio_tokens: 0, cache_write_tokens: 3 },
      completion_tokens_details: { reasoning_tokens: 7, audio_tokens: 0 },
    },
    service_tier: "default",
  });
  assert.deepEqual(res, {
    id: "chatcmpl-D8Z5oo6uDh67AD85p73ksdT1KxhE0",
    model: "gpt-4.1-nano-2025-04-14",
    content: [{ type: "text", text: "Hello!" }],
    stopReason: "stop",
    usage: {
      inputTokens: 16,
      cachedInputTokens: 2,
      cacheWriteTokens: 3,
      outputTokens: 300,
      reasoningTokens: 7,
      webSearchRequests: 0,
    },
  });
});

Deno.test("decodeResponse reads reasoning and tool calls, deriving tool_calls from stop", () => {
  const res = decodeResponse({
    id: "c",
    model: "deepseek",
    choices: [{
      index: 0,
      message: {
        content: null,
        reasoning: "think",
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "f", arguments: '{"a":1}' } },
          { type: "function", function: { name: "g", arguments: { b: 2 } } },
        ],
      },
      finish_reason: "stop",
    }],
  });
  assert.deepEqual(res, {
    id: "c",
    model: "deepseek",
    content: [
      { type: "reasoning", text: "think" },
      { type: "tool_call", id: "call_1", name: "f", arguments: '{"a":1}' },
      { type: "tool_call", id: "call_c_1", name: "g", arguments: '{"b":2}' },
    ],
    stopReason: "tool_calls",
  });
});

Deno.test("decodeResponse maps a refusal to text and content_filter", () => {
  const res = decodeResponse({
    choices: [{ message: { content: null, refusal: "No." }, finish_reason: "stop" }],
  });
  assert.deepEqual(res.content, [{ type: "text", text: "No." }]);
  assert.equal(res.stopReason, "content_filter");
});

Deno.test("decodeResponse throws UpstreamProtocolError on non-completions", () => {
  for (const bad of [null, "x", [], {}, { choices: [] }, { choices: [{ text: "legacy" }] }]) {
    assert.throws(() => decodeResponse(bad), UpstreamProtocolError);
  }
});
