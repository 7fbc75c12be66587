import assert from "node:assert/strict";
import { estimateInputTokens, FILE_TOKENS, IMAGE_TOKENS } from "./estimate.ts";

Deno.test("estimateInputTokens counts text and fixed blocks, skipping base64 payloads", () => {
  const text = { model: "k3", messages: [{ role: "user", content: "a".repeat(300) }] };
  const base = estimateInputTokens(text);
  assert.ok(base >= 100 && base < 120, String(base));
  const img = {
    model: "k3",
    messages: [{
      role: "user",
      content: [{ type: "image_url", image_url: { url: "data:image/png;base64," + "A".repeat(100_000) } }],
    }],
  };
  const withImg = estimateInputTokens(img);
  assert.ok(withImg >= IMAGE_TOKENS && withImg < IMAGE_TOKENS + 40, String(withImg));
  const file = {
    model: "k3",
    messages: [{ role: "user", content: [{ type: "input_file", file_id: "file_x" }] }],
  };
  assert.ok(estimateInputTokens(file) >= FILE_TOKENS);
});

Deno.test("estimateInputTokens ignores max_tokens and model", () => {
  const a = estimateInputTokens({ model: "k3", max_tokens: 5, messages: [] });
  const b = estimateInputTokens({ model: "a-very-long-model-name-here", max_tokens: 99999, messages: [] });
  assert.equal(a, b);
});

Deno.test("estimateInputTokens sees text at any depth, keys included, without recursion", () => {
  let schema: unknown = { description: "d".repeat(600_000) };
  for (let i = 0; i < 100_000; i++) schema = { type: "object", properties: { p: schema } };
  const deep = estimateInputTokens({
    model: "k3",
    messages: [],
    tools: [{ type: "function", parameters: schema }],
  });
  assert.ok(deep > 200_000, String(deep));
  const keys = estimateInputTokens({ model: "k3", messages: [], tools: [{ ["k".repeat(300_000)]: 1 }] });
  assert.ok(keys > 100_000, String(keys));
});

Deno.test("estimateInputTokens is at least the serialised length / 4 for any JSON shape", () => {
  const shapes: Record<string, unknown>[] = [
    { messages: [{ role: "user", content: "x" }] },
    { messages: [{ role: "user", content: [{ type: "text", text: "" }] }] },
    { tools: [{ a: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], b: true, c: null, d: { e: { f: {} } } }] },
    { input: [[[[[]]]]] },
    { metadata: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, i])) },
  ];
  for (const body of shapes) {
    const serialised = JSON.stringify(body).length;
    assert.ok(estimateInputTokens(body) >= serialised / 4, JSON.stringify(body).slice(0, 80));
  }
});
