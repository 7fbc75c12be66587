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
  assert.ok(withImg >= IMAGE_TOKENS && withImg < IMAGE_TOKENS + 20, String(withImg));
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
