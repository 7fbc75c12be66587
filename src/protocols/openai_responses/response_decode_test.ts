import assert from "node:assert/strict";
import { UpstreamProtocolError } from "../codec.ts";
import { decodeResponse } from "./response_decode.ts";

const usage = {
  input_tokens: 45,
  input_tokens_details: { cached_tokens: 5, cache_write_tokens: 0 },
  output_tokens: 25,
  output_tokens_details: { reasoning_tokens: 3 },
  total_tokens: 70,
};

Deno.test("completed with a function call → tool_calls, call_id as id, usage", () => {
  const res = decodeResponse({
    id: "resp_1",
    object: "response",
    status: "completed",
    model: "gpt-5.1",
    output: [
      {
        id: "rs_1",
        type: "reasoning",
        summary: [{ type: "summary_text", text: "a" }, { type: "summary_text", text: "b" }],
      },
      {
        id: "msg_1",
        type: "message",
        role: "assistant",
        content: [{ type: "output_text", text: "ok", annotations: [] }],
      },
      { id: "ws_1", type: "web_search_call", status: "completed" },
      {
        id: "fc_1",
        type: "function_call",
        call_id: "call_1",
        name: "get",
        arguments: '{"x":1}',
        status: "completed",
      },
    ],
    usage,
  });
  assert.deepEqual(res, {
    id: "resp_1",
    model: "gpt-5.1",
    content: [
      { type: "reasoning", text: "a\n\nb" },
      { type: "text", text: "ok" },
      { type: "tool_call", id: "call_1", name: "get", arguments: '{"x":1}' },
    ],
    stopReason: "tool_calls",
    usage: {
      inputTokens: 45,
      cachedInputTokens: 5,
      cacheWriteTokens: 0,
      outputTokens: 25,
      reasoningTokens: 3,
      webSearchRequests: 0,
    },
  });
});

Deno.test("stop, incomplete reasons and missing usage", () => {
  const base = { id: "r", object: "response", model: "m", output: [] };
  assert.equal(decodeResponse({ ...base, status: "completed" }).stopReason, "stop");
  assert.equal(decodeResponse({ ...base }).stopReason, "stop");
  assert.equal(
    decodeResponse({ ...base, status: "incomplete", incomplete_details: { reason: "max_output_tokens" } })
      .stopReason,
    "length",
  );
  assert.equal(
    decodeResponse({ ...base, status: "incomplete", incomplete_details: { reason: "content_filter" } })
      .stopReason,
    "content_filter",
  );
  assert.equal(decodeResponse({ ...base, status: "completed" }).usage, undefined);
});

Deno.test("failed and non-response bodies throw UpstreamProtocolError", () => {
  assert.throws(
    () =>
      decodeResponse({
        object: "response",
        status: "failed",
        output: [],
        error: { code: "server_error", message: "The model failed" },
      }),
    (e: unknown) => e instanceof UpstreamProtocolError && e.message === "server_error: The model failed",
  );
  for (const bad of [null, "x", [], { object: "chat.completion", output: [] }, { id: "r" }]) {
    assert.throws(() => decodeResponse(bad), UpstreamProtocolError);
  }
  assert.throws(
    () => decodeResponse({ object: "response", status: "in_progress", output: [] }),
    UpstreamProtocolError,
  );
});
