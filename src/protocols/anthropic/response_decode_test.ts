import assert from "node:assert/strict";
import { UpstreamProtocolError } from "../codec.ts";
import { decodeResponse } from "./response_decode.ts";

Deno.test("decodeResponse reads the recorded thinking + tool_use message", () => {
  const res = decodeResponse({
    model: "claude-sonnet-4-6",
    id: "msg_011CfWBu94HWxZXjXK6ZhEXM",
    type: "message",
    role: "assistant",
    content: [
      {
        type: "thinking",
        thinking: "The user wants me to call checkSandboxErrors.",
        signature: "Eq4CCpIBCBIYAipA…",
      },
      {
        type: "tool_use",
        id: "toolu_017R7ACrx7NF7sLDDtvdQ1u9",
        name: "checkSandboxErrors",
        input: {},
        caller: {},
      },
    ],
    container: null,
    stop_reason: "tool_use",
    stop_sequence: null,
    usage: {
      input_tokens: 599,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: 59,
      output_tokens_details: { thinking_tokens: 18 },
    },
  });
  assert.deepEqual(res, {
    id: "msg_011CfWBu94HWxZXjXK6ZhEXM",
    model: "claude-sonnet-4-6",
    content: [
      {
        type: "reasoning",
        text: "The user wants me to call checkSandboxErrors.",
        signature: "Eq4CCpIBCBIYAipA…",
      },
      {
        type: "tool_call",
        id: "toolu_017R7ACrx7NF7sLDDtvdQ1u9",
        name: "checkSandboxErrors",
        arguments: "{}",
      },
    ],
    stopReason: "tool_calls",
    usage: {
      inputTokens: 599,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
      outputTokens: 59,
      reasoningTokens: 18,
      webSearchRequests: 0,
    },
  });
});

Deno.test("decodeResponse drops server tool blocks and counts web searches and cache tokens", () => {
  const res = decodeResponse({
    id: "msg_1",
    type: "message",
    model: "m",
    content: [
      { type: "text", text: "I'll fetch the page." },
      { type: "server_tool_use", id: "srvtoolu_01KQ", name: "web_fetch", input: { url: "https://x" } },
      { type: "web_fetch_tool_result", tool_use_id: "srvtoolu_01KQ", content: {} },
      { type: "redacted_thinking", data: "x" },
      { type: "text", text: "This page is about …", citations: null },
    ],
    stop_reason: "stop_sequence",
    stop_sequence: "###",
    usage: {
      input_tokens: 100,
      cache_read_input_tokens: 3000,
      cache_creation_input_tokens: 500,
      output_tokens: 462,
      server_tool_use: { web_search_requests: 2, web_fetch_requests: 1 },
    },
  });
  assert.deepEqual(res.content, [
    { type: "text", text: "I'll fetch the page." },
    { type: "text", text: "This page is about …" },
  ]);
  assert.equal(res.stopReason, "stop_sequence");
  assert.equal(res.stopSequence, "###");
  assert.deepEqual(res.usage, {
    inputTokens: 3600,
    cachedInputTokens: 3000,
    cacheWriteTokens: 500,
    outputTokens: 462,
    reasoningTokens: 0,
    webSearchRequests: 2,
  });
});

Deno.test("decodeResponse throws UpstreamProtocolError for anything but a message", () => {
  for (const bad of [null, "x", [], { type: "error", error: { type: "api_error" } }, { type: "message" }]) {
    assert.throws(() => decodeResponse(bad), UpstreamProtocolError);
  }
  assert.equal(decodeResponse({ content: [], stop_reason: null }).usage, undefined);
});
