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

Deno.test("decodeResponse reads server tool blocks and citations, drops redacted thinking, counts web searches and cache tokens", () => {
  const res = decodeResponse({
    id: "msg_1",
    type: "message",
    model: "m",
    content: [
      { type: "text", text: "I'll fetch the page." },
      { type: "server_tool_use", id: "srvtoolu_01KQ", name: "web_fetch", input: { url: "https://x" } },
      {
        type: "web_fetch_tool_result",
        tool_use_id: "srvtoolu_01KQ",
        content: {
          type: "web_fetch_result",
          url: "https://x",
          retrieved_at: "2025-07-17T21:38:38.606000+00:00",
          content: {
            type: "document",
            source: { type: "text", media_type: "text/plain", data: "…" },
            title: "Maglemosian culture",
          },
        },
      },
      { type: "redacted_thinking", data: "x" },
      { type: "text", text: "This page is about …", citations: null },
      { type: "server_tool_use", id: "srvtoolu_02", name: "web_search", input: { query: "q" } },
      {
        type: "web_search_tool_result",
        tool_use_id: "srvtoolu_02",
        content: [
          {
            type: "web_search_result",
            title: "T1",
            url: "https://a",
            encrypted_content: "E",
            page_age: null,
          },
          {
            type: "web_search_result",
            title: null,
            url: "https://b",
            encrypted_content: "E",
            page_age: "1d",
          },
        ],
      },
      {
        type: "text",
        text: "Cited.",
        citations: [
          {
            type: "web_search_result_location",
            cited_text: "quote",
            url: "https://a",
            title: "T1",
            encrypted_index: "Eo8",
          },
          {
            type: "char_location",
            cited_text: "x",
            document_index: 0,
            start_char_index: 0,
            end_char_index: 1,
          },
          { type: "web_search_result_location", url: "https://b", title: null, encrypted_index: "Eo9" },
          "garbage",
        ],
      },
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
    {
      type: "server_tool",
      id: "srvtoolu_01KQ",
      name: "web_fetch",
      input: { url: "https://x" },
      result: { ok: true, sources: [{ url: "https://x", title: "Maglemosian culture" }] },
    },
    { type: "text", text: "This page is about …" },
    {
      type: "server_tool",
      id: "srvtoolu_02",
      name: "web_search",
      input: { query: "q" },
      result: { ok: true, sources: [{ url: "https://a", title: "T1" }, { url: "https://b" }] },
    },
    {
      type: "text",
      text: "Cited.",
      // char_location names no URL and a malformed entry is no citation: both dropped.
      citations: [{ url: "https://a", title: "T1", citedText: "quote" }, { url: "https://b" }],
    },
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

Deno.test("decodeResponse: a server tool error inside the 200, an empty search, a result without its call", () => {
  const res = decodeResponse({
    type: "message",
    content: [
      { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "a" } },
      {
        type: "web_search_tool_result",
        tool_use_id: "srvtoolu_1",
        content: { type: "web_search_tool_result_error", error_code: "max_uses_exceeded" },
      },
      { type: "server_tool_use", id: "srvtoolu_2", name: "web_search", input: { query: "b" } },
      { type: "web_search_tool_result", tool_use_id: "srvtoolu_2", content: [] },
      {
        type: "web_fetch_tool_result",
        tool_use_id: "srvtoolu_3",
        content: { type: "web_fetch_tool_result_error", error_code: "url_not_accessible" },
      },
      {
        type: "web_fetch_tool_result",
        tool_use_id: "srvtoolu_4",
        content: { type: "web_fetch_tool_result_error" },
      },
      // Other server tools are not beta's: skipped, like a call whose result never came.
      { type: "server_tool_use", id: "srvtoolu_5", name: "code_execution", input: {} },
      { type: "code_execution_tool_result", tool_use_id: "srvtoolu_5", content: {} },
      { type: "server_tool_use", id: "srvtoolu_6", name: "web_search", input: { query: "c" } },
    ],
    stop_reason: "pause_turn",
  });
  assert.deepEqual(res.content, [
    {
      type: "server_tool",
      id: "srvtoolu_1",
      name: "web_search",
      input: { query: "a" },
      result: { ok: false, errorCode: "max_uses_exceeded" },
    },
    {
      type: "server_tool",
      id: "srvtoolu_2",
      name: "web_search",
      input: { query: "b" },
      result: { ok: true, sources: [] },
    },
    {
      type: "server_tool",
      id: "srvtoolu_3",
      name: "web_fetch",
      input: {},
      result: { ok: false, errorCode: "url_not_accessible" },
    },
    {
      type: "server_tool",
      id: "srvtoolu_4",
      name: "web_fetch",
      input: {},
      result: { ok: false, errorCode: "unknown" },
    },
  ]);
  assert.throws(
    () => decodeResponse({ content: [{ type: "web_search_tool_result", content: [] }] }),
    UpstreamProtocolError,
  );
});
