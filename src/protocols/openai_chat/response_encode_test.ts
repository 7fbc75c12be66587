import assert from "node:assert/strict";
import { encodeResponse } from "./response_encode.ts";
import { testCtx } from "./testing/helpers.ts";

Deno.test("encodeResponse renders text, reasoning, tool calls and usage", () => {
  const json = encodeResponse({
    id: "msg_up",
    model: "claude-x",
    content: [
      { type: "reasoning", text: "hmm", signature: "s" },
      { type: "text", text: "Hi " },
      { type: "tool_call", id: "toolu_1", name: "f", arguments: "" },
      { type: "text", text: "there" },
    ],
    stopReason: "stop",
    usage: {
      inputTokens: 100,
      cachedInputTokens: 40,
      cacheWriteTokens: 10,
      outputTokens: 20,
      reasoningTokens: 5,
      webSearchRequests: 0,
    },
  }, testCtx());
  assert.deepEqual(json, {
    id: "chatcmpl-test1",
    object: "chat.completion",
    created: 1700000000,
    model: "gw-model",
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content: "Hi there",
        refusal: null,
        tool_calls: [{ id: "toolu_1", type: "function", function: { name: "f", arguments: "{}" } }],
        reasoning_content: "hmm",
      },
      logprobs: null,
      finish_reason: "tool_calls",
    }],
    usage: {
      prompt_tokens: 100,
      completion_tokens: 20,
      total_tokens: 120,
      prompt_tokens_details: { cached_tokens: 40, cache_write_tokens: 10 },
      completion_tokens_details: { reasoning_tokens: 5 },
    },
  });
});

Deno.test("encodeResponse renders null content, maps length and omits absent usage", () => {
  const json = encodeResponse({ id: "x", model: "y", content: [], stopReason: "length" }, testCtx());
  const choice = (json.choices as Record<string, unknown>[])[0];
  assert.deepEqual(choice?.message, { role: "assistant", content: null, refusal: null });
  assert.equal(choice?.finish_reason, "length");
  assert.equal("usage" in json, false);
});

Deno.test("encodeResponse: server tools leave only the text; citations become message.annotations", () => {
  const json = encodeResponse({
    id: "x",
    model: "y",
    content: [
      { type: "text", text: "Ищу. " },
      {
        type: "server_tool",
        id: "srvtoolu_1",
        name: "web_search",
        input: { query: "q" },
        result: { ok: false, errorCode: "unavailable" },
      },
      { type: "text", text: "да 😀", citations: [{ url: "https://a", title: "A" }, { url: "https://b" }] },
    ],
    stopReason: "stop",
  }, testCtx());
  const cite = (url: string, title: string) => ({
    type: "url_citation",
    url_citation: { start_index: 5, end_index: 10, url, title },
  });
  const choice = (json.choices as Record<string, unknown>[])[0];
  assert.deepEqual(choice?.message, {
    role: "assistant",
    content: "Ищу. да 😀",
    refusal: null,
    annotations: [cite("https://a", "A"), cite("https://b", "")],
  });
  assert.equal(choice?.finish_reason, "stop");
});
