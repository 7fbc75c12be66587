import assert from "node:assert/strict";
import { encodeRequest } from "./request_encode.ts";
import { irRequest } from "./testing/helpers.ts";

const opts = { upstreamModel: "up-model", defaultMaxTokens: 4096 };

Deno.test("encodeRequest emits tool messages before the rest of the user turn", () => {
  const body = encodeRequest(
    irRequest({
      stream: false,
      system: ["be brief", "second"],
      messages: [
        { role: "user", parts: [{ type: "text", text: "weather?" }] },
        {
          role: "assistant",
          parts: [
            { type: "reasoning", text: "need tool", signature: "sig" },
            { type: "text", text: "Checking." },
            { type: "tool_call", id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' },
            { type: "tool_call", id: "call_2", name: "now", arguments: "" },
          ],
        },
        {
          role: "user",
          parts: [
            { type: "text", text: "and also" },
            { type: "tool_result", callId: "call_1", content: "18C" },
            { type: "image", mediaType: "image/jpeg", data: "QUJD" },
            { type: "tool_result", callId: "call_2", content: "noon", isError: true },
          ],
        },
      ],
    }),
    opts,
  );
  assert.deepEqual(body, {
    model: "up-model",
    messages: [
      { role: "system", content: "be brief" },
      { role: "system", content: "second" },
      { role: "user", content: "weather?" },
      {
        role: "assistant",
        content: "Checking.",
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Paris"}' },
          },
          { id: "call_2", type: "function", function: { name: "now", arguments: "{}" } },
        ],
        reasoning_content: "need tool",
      },
      { role: "tool", tool_call_id: "call_1", content: "18C" },
      { role: "tool", tool_call_id: "call_2", content: "noon" },
      {
        role: "user",
        content: [
          { type: "text", text: "and also" },
          { type: "image_url", image_url: { url: "data:image/jpeg;base64,QUJD" } },
        ],
      },
    ],
  });
});

Deno.test("encodeRequest forces include_usage when streaming and maps parameters", () => {
  const body = encodeRequest(
    irRequest({
      stream: true,
      includeUsage: false,
      tools: [
        { name: "f", description: "d", parameters: { type: "object", properties: { a: {} } }, strict: true },
        { name: "g", parameters: { type: "object", properties: {} } },
      ],
      toolChoice: { type: "tool", name: "f" },
      parallelToolCalls: false,
      maxOutputTokens: 300,
      temperature: 0.2,
      topP: 0.9,
      topK: 40,
      stop: ["X"],
      reasoningEffort: "high",
      user: "u1",
    }),
    opts,
  );
  assert.deepEqual(body, {
    model: "up-model",
    messages: [{ role: "user", content: "hi" }],
    tools: [
      {
        type: "function",
        function: {
          name: "f",
          description: "d",
          parameters: { type: "object", properties: { a: {} } },
          strict: true,
        },
      },
      { type: "function", function: { name: "g", parameters: { type: "object", properties: {} } } },
    ],
    tool_choice: { type: "function", function: { name: "f" } },
    parallel_tool_calls: false,
    max_completion_tokens: 300,
    temperature: 0.2,
    top_p: 0.9,
    stop: ["X"],
    reasoning_effort: "high",
    user: "u1",
    stream: true,
    stream_options: { include_usage: true },
  });
});

Deno.test("encodeRequest maps tool_choice strings and drops tool settings without tools", () => {
  const withTools = irRequest({ tools: [{ name: "f", parameters: {} }], toolChoice: { type: "required" } });
  assert.equal(encodeRequest(withTools, opts).tool_choice, "required");
  const body = encodeRequest(
    irRequest({ toolChoice: { type: "none" }, parallelToolCalls: true, stream: false }),
    opts,
  );
  assert.deepEqual(Object.keys(body), ["model", "messages"]);
});

Deno.test("encodeRequest renders URL images and a tool-call-only assistant turn", () => {
  const body = encodeRequest(
    irRequest({
      stream: false,
      messages: [
        { role: "user", parts: [{ type: "image", url: "https://x.test/a.png" }] },
        { role: "assistant", parts: [{ type: "tool_call", id: "c", name: "f", arguments: "{}" }] },
      ],
    }),
    opts,
  );
  assert.deepEqual(body.messages, [
    { role: "user", content: [{ type: "image_url", image_url: { url: "https://x.test/a.png" } }] },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }],
    },
  ]);
});

Deno.test("encodeRequest throws on a file part that reached the upstream encoder", () => {
  const req = irRequest({ messages: [{ role: "user", parts: [{ type: "file", fileId: "file-1" }] }] });
  assert.throws(() => encodeRequest(req, opts), Error);
});
