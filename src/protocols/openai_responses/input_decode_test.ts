import assert from "node:assert/strict";
import { decodeInput } from "./input_decode.ts";

Deno.test("user parts: text, data-URL image, remote image, file id", () => {
  const { messages } = decodeInput([{
    role: "user",
    content: [
      { type: "input_text", text: "Look" },
      { type: "input_image", image_url: "data:image/png;base64,iVBOR", detail: "high" },
      { type: "input_image", image_url: "https://example.com/a.jpg" },
      { type: "input_file", file_id: "file-abc", filename: "a.pdf" },
    ],
  }]);
  assert.deepEqual(messages, [{
    role: "user",
    parts: [
      { type: "text", text: "Look" },
      { type: "image", mediaType: "image/png", data: "iVBOR" },
      { type: "image", url: "https://example.com/a.jpg" },
      { type: "file", fileId: "file-abc" },
    ],
  }]);
});

Deno.test("assistant history: output_text, refusal and replayed output items merge into one turn", () => {
  const { messages } = decodeInput([
    { role: "user", content: "q" },
    {
      id: "msg_1",
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: "a", annotations: [] }, { type: "refusal", refusal: "no" }],
    },
    { type: "function_call", id: "fc_1", call_id: "c1", name: "f", arguments: "" },
    {
      type: "function_call_output",
      call_id: "c1",
      output: [{ type: "input_text", text: "x" }, { type: "input_text", text: "y" }],
    },
    { type: "function_call_output", call_id: "c2", output: "z" },
  ]);
  assert.deepEqual(messages, [
    { role: "user", parts: [{ type: "text", text: "q" }] },
    {
      role: "assistant",
      parts: [{ type: "text", text: "a" }, { type: "text", text: "no" }, {
        type: "tool_call",
        id: "c1",
        name: "f",
        arguments: "{}",
      }],
    },
    {
      role: "user",
      parts: [{ type: "tool_result", callId: "c1", content: "x\ny" }, {
        type: "tool_result",
        callId: "c2",
        content: "z",
      }],
    },
  ]);
});

Deno.test("system/developer items go to system; reasoning uses summary then raw text; empty reasoning dropped", () => {
  const out = decodeInput([
    { type: "message", role: "system", content: [{ type: "input_text", text: "S1" }] },
    { type: "reasoning", summary: [], content: [{ type: "reasoning_text", text: "raw" }] },
    { type: "reasoning", summary: [], encrypted_content: "gA" },
    { role: "user", content: "u" },
    { role: "user", content: "v" },
  ]);
  assert.deepEqual(out.system, ["S1"]);
  assert.deepEqual(out.messages, [
    { role: "assistant", parts: [{ type: "reasoning", text: "raw" }] },
    { role: "user", parts: [{ type: "text", text: "u" }] },
    { role: "user", parts: [{ type: "text", text: "v" }] },
  ]);
});

Deno.test("tool output with an image part is unsupported; empty input array is invalid", () => {
  assert.throws(
    () =>
      decodeInput([{
        type: "function_call_output",
        call_id: "c",
        output: [{ type: "input_image", image_url: "u" }],
      }]),
    { code: "unsupported_parameter", param: "input.0.output.0.type" },
  );
  assert.throws(() => decodeInput([]), { code: "invalid_request", param: "input" });
  assert.throws(
    () => decodeInput([{ role: "user", content: [{ type: "input_image", file_id: "file-1" }] }]),
    { code: "unsupported_parameter", param: "input.0.content.0.file_id" },
  );
});

Deno.test("a web_search_call item sent back with the history is dropped; the annotated text around it stays", () => {
  const { messages } = decodeInput([
    { role: "user", content: "q" },
    {
      id: "ws_1",
      type: "web_search_call",
      status: "completed",
      action: { type: "search", query: "q", sources: [{ type: "url", url: "https://a" }] },
    },
    {
      id: "ws_2",
      type: "web_search_call",
      status: "failed",
      action: { type: "open_page", url: "https://b" },
    },
    {
      id: "msg_1",
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{
        type: "output_text",
        text: "Ответ",
        annotations: [{ type: "url_citation", start_index: 0, end_index: 5, url: "https://a", title: "A" }],
      }],
    },
    { role: "user", content: "ещё" },
  ]);
  assert.deepEqual(messages, [
    { role: "user", parts: [{ type: "text", text: "q" }] },
    { role: "assistant", parts: [{ type: "text", text: "Ответ" }] },
    { role: "user", parts: [{ type: "text", text: "ещё" }] },
  ]);
});
