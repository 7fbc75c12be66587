import assert from "node:assert/strict";
import { encodeMessages, parseToolInput } from "./messages_encode.ts";
import { sanitizeToolId } from "./tool_id.ts";

Deno.test("encodeMessages groups tool results into one user message ahead of its text", () => {
  // What a Chat client sends: assistant with two calls, two tool messages, then user text.
  const out = encodeMessages([
    { role: "user", parts: [{ type: "text", text: "Weather and time?" }] },
    {
      role: "assistant",
      parts: [
        { type: "text", text: "" },
        { type: "tool_call", id: "call_a", name: "weather", arguments: '{"city":"Paris"}' },
        { type: "tool_call", id: "call|b", name: "time", arguments: "" },
      ],
    },
    { role: "user", parts: [{ type: "tool_result", callId: "call_a", content: "18°C" }] },
    {
      role: "user",
      parts: [{ type: "text", text: "Also:" }, { type: "tool_result", callId: "call|b", content: "" }],
    },
    { role: "user", parts: [{ type: "tool_result", callId: "call_c", content: "boom", isError: true }] },
  ]);
  const b = sanitizeToolId("call|b");
  assert.deepEqual(out, [
    { role: "user", content: [{ type: "text", text: "Weather and time?" }] },
    {
      role: "assistant",
      content: [
        { type: "tool_use", id: "call_a", name: "weather", input: { city: "Paris" } },
        { type: "tool_use", id: b, name: "time", input: {} },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "call_a", content: "18°C" },
        { type: "tool_result", tool_use_id: b },
        { type: "tool_result", tool_use_id: "call_c", content: "boom", is_error: true },
        { type: "text", text: "Also:" },
      ],
    },
  ]);
});

Deno.test("encodeMessages keeps signed reasoning, drops unsigned, merges same-role turns, encodes images", () => {
  const out = encodeMessages([
    {
      role: "user",
      parts: [
        { type: "image", mediaType: "image/jpeg", data: "AAA" },
        { type: "image", url: "https://x/y.png" },
      ],
    },
    { role: "user", parts: [{ type: "text", text: "What is it?" }] },
    { role: "assistant", parts: [{ type: "reasoning", text: "foreign" }, { type: "text", text: "A cat." }] },
    { role: "assistant", parts: [{ type: "reasoning", text: "mine", signature: "sig" }] },
    { role: "assistant", parts: [{ type: "text", text: "" }] },
  ]);
  assert.deepEqual(out, [
    {
      role: "user",
      content: [
        { type: "image", source: { type: "base64", media_type: "image/jpeg", data: "AAA" } },
        { type: "image", source: { type: "url", url: "https://x/y.png" } },
        { type: "text", text: "What is it?" },
      ],
    },
    {
      role: "assistant",
      content: [{ type: "text", text: "A cat." }, { type: "thinking", thinking: "mine", signature: "sig" }],
    },
  ]);
});

Deno.test("encodeMessages refuses file parts (the engine must resolve them first)", () => {
  assert.throws(() => encodeMessages([{ role: "user", parts: [{ type: "file", fileId: "f" }] }]), Error);
});

Deno.test("parseToolInput wraps invalid or non-object JSON as {}", () => {
  assert.deepEqual(parseToolInput('{"a":1}'), { a: 1 });
  assert.deepEqual(parseToolInput(""), {});
  assert.deepEqual(parseToolInput('{"a":'), {});
  assert.deepEqual(parseToolInput("[1]"), {});
  assert.deepEqual(parseToolInput("null"), {});
});
