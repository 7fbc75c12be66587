import assert from "node:assert/strict";
import { fromChatUsage, fullChatUsage, toChatUsage } from "./usage.ts";

Deno.test("toChatUsage keeps cached tokens inside prompt_tokens", () => {
  assert.deepEqual(
    toChatUsage({
      inputTokens: 100,
      cachedInputTokens: 30,
      cacheWriteTokens: 0,
      outputTokens: 50,
      reasoningTokens: 20,
      webSearchRequests: 1,
    }),
    {
      prompt_tokens: 100,
      completion_tokens: 50,
      total_tokens: 150,
      prompt_tokens_details: { cached_tokens: 30 },
      completion_tokens_details: { reasoning_tokens: 20 },
    },
  );
});

Deno.test("fromChatUsage reads only the fields present", () => {
  assert.deepEqual(fromChatUsage({ prompt_tokens: 5 }), { inputTokens: 5 });
  assert.deepEqual(
    fromChatUsage({
      prompt_tokens: 10,
      completion_tokens: 3,
      prompt_tokens_details: { cached_tokens: 4, cache_write_tokens: 2 },
      completion_tokens_details: { reasoning_tokens: 1 },
    }),
    { inputTokens: 10, outputTokens: 3, cachedInputTokens: 4, cacheWriteTokens: 2, reasoningTokens: 1 },
  );
  assert.deepEqual(fromChatUsage({ prompt_cache_hit_tokens: 7, prompt_tokens: "x" }), {
    cachedInputTokens: 7,
  });
});

Deno.test("fullChatUsage fills absent fields with zero", () => {
  assert.deepEqual(fullChatUsage({ completion_tokens: 2 }), {
    inputTokens: 0,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: 2,
    reasoningTokens: 0,
    webSearchRequests: 0,
  });
});
