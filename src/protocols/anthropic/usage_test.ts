import assert from "node:assert/strict";
import {
  mergeAnthropicUsage,
  readAnthropicUsage,
  toIRUsage,
  usageFromAnthropic,
  usageToAnthropic,
} from "./usage.ts";

Deno.test("usage conversion adds cache reads and writes into input and splits them back out", () => {
  const table = [
    { wire: { input_tokens: 10, output_tokens: 5 }, input: 10, read: 0, write: 0 },
    {
      wire: { input_tokens: 10, cache_read_input_tokens: 90, output_tokens: 5 },
      input: 100,
      read: 90,
      write: 0,
    },
    {
      wire: { input_tokens: 10, cache_creation_input_tokens: 40, output_tokens: 5 },
      input: 50,
      read: 0,
      write: 40,
    },
    {
      wire: {
        input_tokens: 3,
        cache_read_input_tokens: 1800,
        cache_creation_input_tokens: 200,
        output_tokens: 5,
      },
      input: 2003,
      read: 1800,
      write: 200,
    },
    {
      wire: {
        input_tokens: 3,
        cache_read_input_tokens: null,
        cache_creation_input_tokens: null,
        output_tokens: 5,
      },
      input: 3,
      read: 0,
      write: 0,
    },
  ];
  for (const row of table) {
    const ir = usageFromAnthropic(row.wire)!;
    assert.deepEqual([ir.inputTokens, ir.cachedInputTokens, ir.cacheWriteTokens, ir.outputTokens], [
      row.input,
      row.read,
      row.write,
      5,
    ]);
    const back = usageToAnthropic(ir);
    assert.deepEqual(back, {
      input_tokens: row.wire.input_tokens,
      output_tokens: 5,
      cache_read_input_tokens: row.read,
      cache_creation_input_tokens: row.write,
    });
  }
});

Deno.test("usage reads thinking tokens and web searches; missing usage is undefined", () => {
  const ir = usageFromAnthropic({
    input_tokens: 1,
    output_tokens: 9,
    output_tokens_details: { thinking_tokens: 4 },
    server_tool_use: { web_search_requests: 3, web_fetch_requests: 1 },
  });
  assert.deepEqual(ir, {
    inputTokens: 1,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: 9,
    reasoningTokens: 4,
    webSearchRequests: 3,
  });
  assert.equal(usageFromAnthropic(undefined), undefined);
});

Deno.test("streaming usage merges field by field, the last value winning", () => {
  const acc = readAnthropicUsage({ input_tokens: 5, cache_read_input_tokens: 100, output_tokens: 1 });
  mergeAnthropicUsage(acc, readAnthropicUsage({ output_tokens: 30 }));
  assert.deepEqual(toIRUsage(acc), {
    inputTokens: 105,
    cachedInputTokens: 100,
    cacheWriteTokens: 0,
    outputTokens: 30,
  });
  mergeAnthropicUsage(acc, readAnthropicUsage({ input_tokens: 50, cache_creation_input_tokens: 7 }));
  assert.deepEqual(toIRUsage(acc), {
    inputTokens: 157,
    cachedInputTokens: 100,
    cacheWriteTokens: 7,
    outputTokens: 30,
  });
  assert.deepEqual(toIRUsage(readAnthropicUsage({ output_tokens: 2 })), { outputTokens: 2 });
});
