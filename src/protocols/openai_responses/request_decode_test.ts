import assert from "node:assert/strict";
import { GatewayError } from "../../errors/gateway_error.ts";
import { decodeRequest } from "./request_decode.ts";

const ok = { model: "m", input: "hi" };

Deno.test("decodes a full request", () => {
  const req = decodeRequest({
    model: "gpt-x",
    instructions: "Be brief",
    input: [
      { role: "developer", content: "Use metric units" },
      { type: "message", role: "user", content: [{ type: "input_text", text: "Weather?" }] },
      {
        type: "reasoning",
        id: "rs_1",
        summary: [{ type: "summary_text", text: "need tool" }],
        encrypted_content: "gA",
      },
      { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Oslo"}' },
      { type: "function_call_output", call_id: "call_1", output: '{"temp_c":3}' },
      { role: "user", content: "Thanks" },
    ],
    tools: [{ type: "function", name: "get_weather", parameters: { type: "object" }, strict: true }],
    tool_choice: { type: "function", name: "get_weather" },
    parallel_tool_calls: false,
    max_output_tokens: 256,
    temperature: 0.5,
    top_p: 0.9,
    reasoning: { effort: "low", summary: "auto" },
    stream: true,
    safety_identifier: "u-1",
    store: false,
    metadata: { a: "b" },
    some_future_field: 1,
  });
  assert.deepEqual(req, {
    model: "gpt-x",
    system: ["Be brief", "Use metric units"],
    messages: [
      { role: "user", parts: [{ type: "text", text: "Weather?" }] },
      {
        role: "assistant",
        parts: [
          { type: "reasoning", text: "need tool" },
          { type: "tool_call", id: "call_1", name: "get_weather", arguments: '{"city":"Oslo"}' },
        ],
      },
      {
        role: "user",
        parts: [{ type: "tool_result", callId: "call_1", content: '{"temp_c":3}' }, {
          type: "text",
          text: "Thanks",
        }],
      },
    ],
    stream: true,
    includeUsage: false,
    tools: [{ name: "get_weather", parameters: { type: "object" }, strict: true }],
    toolChoice: { type: "tool", name: "get_weather" },
    parallelToolCalls: false,
    maxOutputTokens: 256,
    temperature: 0.5,
    topP: 0.9,
    reasoningEffort: "low",
    user: "u-1",
    stop: [],
  });
});

Deno.test("string input is one user message; nulls mean absent", () => {
  const req = decodeRequest({
    ...ok,
    instructions: null,
    tools: null,
    previous_response_id: null,
    user: "u",
  });
  assert.deepEqual(req.messages, [{ role: "user", parts: [{ type: "text", text: "hi" }] }]);
  assert.deepEqual(req.system, []);
  assert.equal(req.stream, false);
  assert.equal(req.user, "u");
});

const rejections: [string, Record<string, unknown>, string, string][] = [
  ["missing input", { model: "m" }, "invalid_request", "input"],
  ["input of wrong type", { model: "m", input: 5 }, "invalid_request", "input"],
  [
    "previous_response_id",
    { ...ok, previous_response_id: "resp_1" },
    "unsupported_parameter",
    "previous_response_id",
  ],
  ["conversation", { ...ok, conversation: { id: "conv_1" } }, "unsupported_parameter", "conversation"],
  [
    "hosted tool item",
    { model: "m", input: [{ type: "file_search_call", id: "fs_1" }] },
    "invalid_request",
    "input.0.type",
  ],
  ["non-object item", { model: "m", input: ["x"] }, "invalid_request", "input.0"],
  [
    "item_reference 2",
    { model: "m", input: [{ role: "user", content: "a" }, { type: "item_reference", id: "m" }] },
    "invalid_request",
    "input.1.type",
  ],
  ["bad role", { model: "m", input: [{ role: "tool", content: "x" }] }, "invalid_request", "input.0.role"],
  [
    "bad part type",
    {
      model: "m",
      input: [{ role: "user", content: [{ type: "input_text", text: "a" }, { type: "input_video" }] }],
    },
    "invalid_request",
    "input.0.content.1.type",
  ],
  [
    "image in assistant",
    {
      model: "m",
      input: [{ role: "assistant", content: [{ type: "input_image", image_url: "https://x" }] }],
    },
    "invalid_request",
    "input.0.content.0.type",
  ],
  [
    "file without id",
    {
      model: "m",
      input: [{
        role: "user",
        content: [{ type: "input_file", file_data: "data:application/pdf;base64,AA" }],
      }],
    },
    "unsupported_parameter",
    "input.0.content.0.file_data",
  ],
  [
    "function_call without call_id",
    { model: "m", input: [{ type: "function_call", name: "f", arguments: "{}" }] },
    "invalid_request",
    "input.0.call_id",
  ],
  [
    "function_call_output bad output",
    { model: "m", input: [{ type: "function_call_output", call_id: "c", output: 3 }] },
    "invalid_request",
    "input.0.output",
  ],
  ["instructions not a string", { ...ok, instructions: ["a"] }, "invalid_request", "instructions"],
  ["tools not an array", { ...ok, tools: {} }, "invalid_request", "tools"],
  [
    "Chat-shaped tool",
    { ...ok, tools: [{ type: "function", function: { name: "f" } }] },
    "invalid_request",
    "tools.0",
  ],
  [
    "Anthropic-shaped tool",
    { ...ok, tools: [{ type: "function", name: "a" }, { name: "f", input_schema: {} }] },
    "invalid_request",
    "tools.1",
  ],
  ["built-in tool", { ...ok, tools: [{ type: "file_search" }] }, "unsupported_parameter", "tools.0"],
  ["tool without name", { ...ok, tools: [{ type: "function" }] }, "invalid_request", "tools.0.name"],
  ["tool_choice bad string", { ...ok, tool_choice: "any" }, "invalid_parameter", "tool_choice"],
  [
    "tool_choice hosted",
    { ...ok, tool_choice: { type: "web_search_preview" } },
    "unsupported_parameter",
    "tool_choice",
  ],
  ["max_output_tokens zero", { ...ok, max_output_tokens: 0 }, "invalid_parameter", "max_output_tokens"],
  ["max_output_tokens fraction", { ...ok, max_output_tokens: 1.5 }, "invalid_parameter", "max_output_tokens"],
  ["max_output_tokens string", { ...ok, max_output_tokens: "10" }, "invalid_parameter", "max_output_tokens"],
  ["temperature string", { ...ok, temperature: "hot" }, "invalid_request", "temperature"],
  ["temperature out of range", { ...ok, temperature: 3 }, "invalid_parameter", "temperature"],
  ["top_p out of range", { ...ok, top_p: 1.5 }, "invalid_parameter", "top_p"],
  ["stream not boolean", { ...ok, stream: "yes" }, "invalid_request", "stream"],
  [
    "parallel_tool_calls not boolean",
    { ...ok, parallel_tool_calls: 1 },
    "invalid_request",
    "parallel_tool_calls",
  ],
  ["reasoning not object", { ...ok, reasoning: "high" }, "invalid_request", "reasoning"],
  [
    "reasoning effort empty",
    { ...ok, reasoning: { effort: "  " } },
    "invalid_parameter",
    "reasoning.effort",
  ],
  ["user not string", { ...ok, user: 42 }, "invalid_request", "user"],
  ["safety_identifier not string", { ...ok, safety_identifier: {} }, "invalid_request", "safety_identifier"],
];

for (const [name, body, code, param] of rejections) {
  Deno.test(`rejects: ${name} → ${code} ${param}`, () => {
    assert.throws(() => decodeRequest(body), (e: unknown) => {
      assert.ok(e instanceof GatewayError, String(e));
      assert.equal(e.code, code);
      assert.equal(e.param, param);
      return true;
    });
  });
}

Deno.test("decodeRequest forwards any non-empty reasoning effort as sent (spec §4.2)", () => {
  assert.equal(
    decodeRequest({ ...ok, reasoning: { effort: "whatever-level" } }).reasoningEffort,
    "whatever-level",
  );
});
