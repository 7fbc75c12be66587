import assert from "node:assert/strict";
import { usageFromWire, usageToWire } from "./usage.ts";

Deno.test("usage wire → IR keeps only present fields; IR → wire always complete", () => {
  assert.equal(usageFromWire(null), undefined);
  assert.deepEqual(usageFromWire({ input_tokens: 10, output_tokens: 2 }), {
    inputTokens: 10,
    outputTokens: 2,
  });
  assert.deepEqual(
    usageFromWire({
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 4, cache_write_tokens: 1 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 3 },
    }),
    { inputTokens: 10, outputTokens: 5, cachedInputTokens: 4, cacheWriteTokens: 1, reasoningTokens: 3 },
  );
  assert.deepEqual(usageToWire(undefined), {
    input_tokens: 0,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 0,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 0,
  });
});
