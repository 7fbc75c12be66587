import assert from "node:assert/strict";
import { encodeRequest } from "./request_encode.ts";
import { baseRequest } from "./testing/helpers.ts";

const opts = { upstreamModel: "gpt-upstream", defaultMaxTokens: 4096 };

Deno.test("encodes history: output_text for assistant, function_call without id, function_call_output first, reasoning dropped", () => {
  const body = encodeRequest(
    baseRequest({
      system: ["A", "B"],
      messages: [
        {
          role: "user",
          parts: [{ type: "text", text: "hi" }, { type: "image", mediaType: "image/jpeg", data: "AAA" }],
        },
        {
          role: "assistant",
          parts: [
            { type: "reasoning", text: "foreign thoughts" },
            { type: "text", text: "calling" },
            { type: "tool_call", id: "toolu_1", name: "f", arguments: "" },
            { type: "reasoning", text: "dropped: signature of unknown origin", signature: "gAAA" },
          ],
        },
        {
          role: "user",
          parts: [{ type: "text", text: "and" }, {
            type: "tool_result",
            callId: "toolu_1",
            content: "42",
            isError: true,
          }],
        },
      ],
      tools: [{ name: "f", parameters: { type: "object", properties: {} } }],
      toolChoice: { type: "auto" },
      parallelToolCalls: true,
      maxOutputTokens: 100,
      temperature: 0.2,
      topP: 0.8,
      topK: 5,
      stop: ["x"],
      reasoningEffort: "high",
      user: "u1",
      stream: true,
    }),
    opts,
  );
  assert.deepEqual(body, {
    model: "gpt-upstream",
    instructions: "A\n\nB",
    input: [
      {
        type: "message",
        role: "user",
        content: [{ type: "input_text", text: "hi" }, {
          type: "input_image",
          image_url: "data:image/jpeg;base64,AAA",
          detail: "auto",
        }],
      },
      {
        type: "message",
        role: "assistant",
        content: [{ type: "output_text", text: "calling", annotations: [] }],
      },
      { type: "function_call", call_id: "toolu_1", name: "f", arguments: "{}" },
      { type: "function_call_output", call_id: "toolu_1", output: "42" },
      { type: "message", role: "user", content: [{ type: "input_text", text: "and" }] },
    ],
    tools: [{ type: "function", name: "f", parameters: { type: "object", properties: {} }, strict: false }],
    tool_choice: "auto",
    parallel_tool_calls: true,
    max_output_tokens: 100,
    temperature: 0.2,
    top_p: 0.8,
    reasoning: { effort: "high", summary: "auto" },
    user: "u1",
    stream: true,
    store: false,
  });
});

Deno.test("minimal request; strict:true kept; file parts are a programming error", () => {
  const body = encodeRequest(
    baseRequest({
      stream: false,
      messages: [{ role: "user", parts: [{ type: "image", url: "https://x/y.png" }] }],
      tools: [{ name: "s", parameters: {}, strict: true }],
      toolChoice: { type: "tool", name: "s" },
    }),
    opts,
  );
  assert.deepEqual(body.input, [{
    type: "message",
    role: "user",
    content: [{ type: "input_image", image_url: "https://x/y.png", detail: "auto" }],
  }]);
  assert.deepEqual(body.tools, [{ type: "function", name: "s", parameters: {}, strict: true }]);
  assert.deepEqual(body.tool_choice, { type: "function", name: "s" });
  assert.equal(body.instructions, undefined);
  assert.equal(body.stream, false);
  assert.equal(body.store, false);
  assert.throws(
    () =>
      encodeRequest(
        baseRequest({ messages: [{ role: "user", parts: [{ type: "file", fileId: "f" }] }] }),
        opts,
      ),
    Error,
  );
});
