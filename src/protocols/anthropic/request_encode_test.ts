import assert from "node:assert/strict";
import { encodeRequest } from "./request_encode.ts";
import { baseRequest } from "./testing/helpers.ts";

const opts = { upstreamModel: "claude-sonnet-4-5", defaultMaxTokens: 4096 };

Deno.test("encodeRequest renders the core fields", () => {
  const body = encodeRequest(
    baseRequest({
      system: ["Be terse.", "Use metric."],
      stream: false,
      temperature: 1.6,
      topP: 0.9,
      topK: 40,
      stop: ["END"],
      user: "u-1",
      tools: [{ name: "f", description: "does f", parameters: {} }, {
        name: "g",
        parameters: { type: "object" },
      }],
      toolChoice: { type: "required" },
      parallelToolCalls: false,
    }),
    opts,
  );
  assert.deepEqual(body, {
    model: "claude-sonnet-4-5",
    max_tokens: 4096,
    messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    stream: false,
    system: "Be terse.\n\nUse metric.",
    tools: [
      { name: "f", description: "does f", input_schema: { type: "object", properties: {} } },
      { name: "g", input_schema: { type: "object" } },
    ],
    tool_choice: { type: "any", disable_parallel_tool_use: true },
    temperature: 1,
    top_p: 0.9,
    top_k: 40,
    stop_sequences: ["END"],
    metadata: { user_id: "u-1" },
  });
});

Deno.test("encodeRequest maps tool_choice and drops it without tools", () => {
  const tools = [{ name: "f", parameters: { type: "object" } }];
  const choice = (over: Parameters<typeof baseRequest>[0]) =>
    encodeRequest(baseRequest(over), opts).tool_choice;
  assert.deepEqual(choice({ tools, toolChoice: { type: "auto" } }), { type: "auto" });
  assert.deepEqual(choice({ tools, toolChoice: { type: "none" } }), { type: "none" });
  assert.deepEqual(choice({ tools, toolChoice: { type: "tool", name: "f" } }), { type: "tool", name: "f" });
  assert.deepEqual(choice({ tools, parallelToolCalls: false }), {
    type: "auto",
    disable_parallel_tool_use: true,
  });
  assert.equal(choice({ tools }), undefined);
  assert.equal(choice({ toolChoice: { type: "required" } }), undefined);
});

Deno.test("encodeRequest turns a budget or an effort into thinking and keeps max_tokens above it", () => {
  const budget = encodeRequest(
    baseRequest({ thinkingBudget: 3000, reasoningEffort: "medium", maxOutputTokens: 8000 }),
    opts,
  );
  assert.deepEqual([budget.thinking, budget.max_tokens], [{ type: "enabled", budget_tokens: 3000 }, 8000]);

  const low = encodeRequest(baseRequest({ reasoningEffort: "low", maxOutputTokens: 500 }), opts);
  assert.deepEqual([low.thinking, low.max_tokens], [{ type: "enabled", budget_tokens: 1024 }, 1524]);

  const high = encodeRequest(
    baseRequest({
      reasoningEffort: "high",
      temperature: 0.2,
      topK: 5,
      topP: 0.5,
      tools: [{ name: "f", parameters: { type: "object" } }],
      toolChoice: { type: "tool", name: "f" },
    }),
    opts,
  );
  assert.deepEqual(high.thinking, { type: "enabled", budget_tokens: 4096 });
  assert.deepEqual(high.tool_choice, { type: "auto" }, "forced tool use is not allowed with thinking");
  assert.deepEqual([high.temperature, high.top_k, high.top_p], [undefined, undefined, undefined]);

  assert.equal(
    encodeRequest(baseRequest({ reasoningEffort: "none", thinkingBudget: 2000 }), opts).thinking,
    undefined,
  );
  assert.equal(encodeRequest(baseRequest({ reasoningEffort: "medium" }), opts).max_tokens, 4096);
});
