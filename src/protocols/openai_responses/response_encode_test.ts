import assert from "node:assert/strict";
import { encodeResponse } from "./response_encode.ts";
import { testCtx } from "./testing/helpers.ts";

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

Deno.test("encodes provider-run tools as web_search_call items and citations as url_citation annotations", () => {
  const out = encodeResponse({
    id: "msg_up",
    model: "m",
    content: [
      { type: "text", text: "Ищу." },
      {
        type: "server_tool",
        id: "srvtoolu_1",
        name: "web_search",
        input: { query: "q" },
        result: { ok: true, sources: [{ url: "https://a", title: "A" }] },
      },
      {
        type: "server_tool",
        id: "srvtoolu_2",
        name: "web_search",
        input: { query: "r" },
        result: { ok: false, errorCode: "max_uses_exceeded" },
      },
      {
        type: "server_tool",
        id: "srvtoolu_3",
        name: "web_fetch",
        input: { url: "https://c" },
        result: { ok: false, errorCode: "url_not_accessible" },
      },
      { type: "text", text: "Вот: " },
      { type: "text", text: "да 😀", citations: [{ url: "https://a", title: "A" }, { url: "https://b" }] },
      { type: "text", text: "." },
    ],
    stopReason: "stop",
  }, testCtx());
  const a = { type: "url_citation", start_index: 5, end_index: 10 };
  assert.deepEqual(out.output, [
    {
      id: "msg_2",
      type: "message",
      status: "completed",
      content: [{ type: "output_text", annotations: [], logprobs: [], text: "Ищу." }],
      role: "assistant",
    },
    {
      id: "ws_3",
      type: "web_search_call",
      status: "completed",
      action: { type: "search", query: "q", queries: ["q"], sources: [{ type: "url", url: "https://a" }] },
    },
    {
      id: "ws_4",
      type: "web_search_call",
      status: "failed",
      action: { type: "search", query: "r", queries: ["r"] },
    },
    {
      id: "ws_5",
      type: "web_search_call",
      status: "failed",
      action: { type: "open_page", url: "https://c" },
    },
    {
      id: "msg_6",
      type: "message",
      status: "completed",
      content: [{
        type: "output_text",
        annotations: [{ ...a, url: "https://a", title: "A" }, { ...a, url: "https://b", title: "" }],
        logprobs: [],
        text: "Вот: да 😀.",
      }],
      role: "assistant",
    },
  ]);
});
