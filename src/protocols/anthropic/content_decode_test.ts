import assert from "node:assert/strict";
import { decodeMessages, decodeSystem } from "./content_decode.ts";

Deno.test("decodeMessages turns rich tool results, images and text documents into parts", () => {
  const messages = decodeMessages([
    {
      role: "user",
      content: [
        { type: "image", source: { type: "url", url: "https://x/cat.png" } },
        {
          type: "document",
          title: "Notes",
          source: { type: "text", media_type: "text/plain", data: "body" },
        },
        {
          type: "tool_result",
          tool_use_id: "toolu_1",
          is_error: true,
          content: [
            { type: "text", text: "line 1" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBOR" } },
            { type: "text", text: "line 2" },
          ],
        },
      ],
    },
  ]);
  assert.deepEqual(messages, [{
    role: "user",
    parts: [
      { type: "image", url: "https://x/cat.png" },
      { type: "text", text: "Notes\n\nbody" },
      { type: "tool_result", callId: "toolu_1", content: "line 1\nline 2", isError: true },
      { type: "image", mediaType: "image/png", data: "iVBOR" },
    ],
  }]);
});

Deno.test("decodeMessages drops server-tool echoes and an empty final assistant prefill", () => {
  const messages = decodeMessages([
    { role: "user", content: "search" },
    {
      role: "assistant",
      content: [
        { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "q" } },
        { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] },
        { type: "text", text: "found" },
        { type: "thinking", thinking: "t", signature: "" },
      ],
    },
    { role: "user", content: "more" },
    { role: "assistant", content: "" },
  ]);
  assert.deepEqual(messages, [
    { role: "user", parts: [{ type: "text", text: "search" }] },
    { role: "assistant", parts: [{ type: "text", text: "found" }, { type: "reasoning", text: "t" }] },
    { role: "user", parts: [{ type: "text", text: "more" }] },
  ]);
});

Deno.test("decodeSystem accepts a string or text blocks", () => {
  assert.deepEqual(decodeSystem("be brief"), ["be brief"]);
  assert.deepEqual(decodeSystem(""), []);
  assert.deepEqual(decodeSystem([{ type: "text", text: "a" }, { type: "text", text: "b" }]), ["a", "b"]);
});
