import assert from "node:assert/strict";
import { decodeThinking, decodeToolChoice, decodeTools, effortForBudget } from "./tools_decode.ts";

Deno.test("decodeTools accepts custom tools with or without type and skips server tools", () => {
  const tools = decodeTools([
    { name: "a", input_schema: { type: "object" } },
    { type: "custom", name: "b-2", input_schema: { type: "object" }, strict: true, cache_control: {} },
    { type: "web_fetch_20250910", name: "web_fetch" },
    { type: "bash_20250124", name: "bash" },
  ]);
  assert.deepEqual(tools, [
    { name: "a", parameters: { type: "object" } },
    { name: "b-2", parameters: { type: "object" }, strict: true },
  ]);
});

Deno.test("decodeToolChoice maps the four choices", () => {
  assert.deepEqual(decodeToolChoice({ type: "auto" }), { toolChoice: { type: "auto" } });
  assert.deepEqual(decodeToolChoice({ type: "any" }), { toolChoice: { type: "required" } });
  assert.deepEqual(decodeToolChoice({ type: "none" }), { toolChoice: { type: "none" } });
  assert.deepEqual(decodeToolChoice({ type: "tool", name: "f", disable_parallel_tool_use: true }), {
    toolChoice: { type: "tool", name: "f" },
    parallelToolCalls: false,
  });
  assert.deepEqual(decodeToolChoice(undefined), {});
});

Deno.test("effortForBudget follows the 1024 / 4096 thresholds", () => {
  assert.deepEqual([1024, 1025, 4096, 4097].map(effortForBudget), ["low", "medium", "medium", "high"]);
  assert.deepEqual(decodeThinking({ type: "adaptive" }, undefined), {});
});
