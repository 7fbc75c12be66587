import assert from "node:assert/strict";
import { GatewayError } from "../../errors/gateway_error.ts";
import { decodeRequest } from "./request_decode.ts";

const user = { role: "user", content: "hi" };
const base = (over: Record<string, unknown>) => ({ model: "m", messages: [user], ...over });
const fn = (name: string, extra: Record<string, unknown> = {}) => ({
  type: "function",
  function: { name, ...extra },
});

Deno.test("decodeRequest decodes a full request", () => {
  const req = decodeRequest({
    model: "gpt-x",
    messages: [
      { role: "system", content: "sys" },
      { role: "developer", content: [{ type: "text", text: "dev" }] },
      {
        role: "user",
        content: [
          { type: "text", text: "look" },
          { type: "image_url", image_url: { url: "data:image/png;base64,AAAA", detail: "low" } },
          { type: "image_url", image_url: { url: "https://x.test/a.jpg" } },
          { type: "input_file", file_id: "file-1" },
          { type: "file", file: { file_id: "file-2" } },
        ],
      },
      {
        role: "assistant",
        content: null,
        reasoning_content: "why",
        tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "call_1", content: "r1" },
      {
        role: "tool",
        tool_call_id: "call_2",
        content: [{ type: "text", text: "r" }, { type: "text", text: "2" }],
      },
      { role: "system", content: "late" },
      { role: "user", content: "next" },
    ],
    tools: [fn("f", { description: "d", parameters: { type: "object" }, strict: true }), fn("g")],
    tool_choice: { type: "function", function: { name: "f" } },
    parallel_tool_calls: false,
    max_tokens: 10,
    max_completion_tokens: 20,
    stream: true,
    stream_options: { include_usage: true, include_obfuscation: false },
    temperature: 0.5,
    top_p: 1,
    stop: "END",
    reasoning_effort: "low",
    user: "u1",
    safety_identifier: "s1",
    seed: 42,
  });
  assert.deepEqual(req, {
    model: "gpt-x",
    system: ["sys", "dev", "late"],
    messages: [
      {
        role: "user",
        parts: [
          { type: "text", text: "look" },
          { type: "image", mediaType: "image/png", data: "AAAA" },
          { type: "image", url: "https://x.test/a.jpg" },
          { type: "file", fileId: "file-1" },
          { type: "file", fileId: "file-2" },
        ],
      },
      {
        role: "assistant",
        parts: [
          { type: "reasoning", text: "why" },
          { type: "tool_call", id: "call_1", name: "f", arguments: "{}" },
        ],
      },
      {
        role: "user",
        parts: [
          { type: "tool_result", callId: "call_1", content: "r1" },
          { type: "tool_result", callId: "call_2", content: "r2" },
        ],
      },
      { role: "user", parts: [{ type: "text", text: "next" }] },
    ],
    stream: true,
    includeUsage: true,
    tools: [
      { name: "f", description: "d", parameters: { type: "object" }, strict: true },
      { name: "g", parameters: { type: "object", properties: {} } },
    ],
    toolChoice: { type: "tool", name: "f" },
    parallelToolCalls: false,
    maxOutputTokens: 20,
    temperature: 0.5,
    topP: 1,
    stop: ["END"],
    reasoningEffort: "low",
    user: "s1",
  });
});

Deno.test("decodeRequest applies defaults and accepts null optional fields", () => {
  const req = decodeRequest(
    base({ stream: null, temperature: null, stop: ["a", "b"], max_tokens: 5, user: "u" }),
  );
  assert.equal(req.stream, false);
  assert.equal(req.includeUsage, false);
  assert.equal(req.temperature, undefined);
  assert.deepEqual(req.stop, ["a", "b"]);
  assert.equal(req.maxOutputTokens, 5);
  assert.equal(req.user, "u");
  assert.deepEqual(req.tools, []);
});

Deno.test("decodeRequest turns a non-base64 data URL into base64 data", () => {
  const req = decodeRequest(base({
    messages: [{
      role: "user",
      content: [{ type: "image_url", image_url: { url: "data:image/svg+xml,%3Csvg%2F%3E" } }],
    }],
  }));
  assert.deepEqual(req.messages[0]?.parts, [{
    type: "image",
    mediaType: "image/svg+xml",
    data: btoa("<svg/>"),
  }]);
});

const REJECTIONS: [string, Record<string, unknown>, string, string][] = [
  ["empty messages", base({ messages: [] }), "invalid_request", "messages"],
  ["messages not an array", base({ messages: "hi" }), "invalid_request", "messages"],
  ["message not an object", base({ messages: [user, 3] }), "invalid_request", "messages.1"],
  [
    "unknown role",
    base({ messages: [user, { role: "function", content: "x" }] }),
    "invalid_request",
    "messages.1.role",
  ],
  [
    "unknown part type",
    base({ messages: [user, { role: "user", content: [{ type: "text", text: "a" }, { type: "video" }] }] }),
    "invalid_request",
    "messages.1.content.1.type",
  ],
  [
    "input_audio part",
    base({ messages: [{ role: "user", content: [{ type: "input_audio", input_audio: {} }] }] }),
    "invalid_request",
    "messages.0.content.0.type",
  ],
  [
    "Responses-style image_url string",
    base({ messages: [{ role: "user", content: [{ type: "image_url", image_url: "https://x/a.png" }] }] }),
    "invalid_request",
    "messages.0.content.0.image_url",
  ],
  [
    "ftp image url",
    base({
      messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "ftp://x/a.png" } }] }],
    }),
    "invalid_request",
    "messages.0.content.0.image_url.url",
  ],
  [
    "input_file in an assistant message",
    base({ messages: [user, { role: "assistant", content: [{ type: "input_file", file_id: "f" }] }] }),
    "invalid_request",
    "messages.1.content.0.type",
  ],
  [
    "input_file in a system message",
    base({ messages: [{ role: "system", content: [{ type: "input_file", file_id: "f" }] }, user] }),
    "invalid_request",
    "messages.0.content.0.type",
  ],
  [
    "input_file without file_id",
    base({ messages: [{ role: "user", content: [{ type: "input_file" }] }] }),
    "invalid_request",
    "messages.0.content.0.file_id",
  ],
  [
    "empty user content array",
    base({ messages: [{ role: "user", content: [] }] }),
    "invalid_request",
    "messages.0.content",
  ],
  [
    "user content number",
    base({ messages: [{ role: "user", content: 5 }] }),
    "invalid_request",
    "messages.0.content",
  ],
  [
    "assistant without content or tool_calls",
    base({ messages: [user, { role: "assistant" }] }),
    "invalid_request",
    "messages.1.content",
  ],
  [
    "tool call arguments as object",
    base({
      messages: [user, {
        role: "assistant",
        tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: {} } }],
      }],
    }),
    "invalid_request",
    "messages.1.tool_calls.0.function.arguments",
  ],
  [
    "tool without tool_call_id",
    base({ messages: [user, { role: "tool", content: "x" }] }),
    "invalid_request",
    "messages.1.tool_call_id",
  ],
  [
    "Anthropic tool shape",
    base({ tools: [fn("ok"), { name: "f", input_schema: { type: "object" } }] }),
    "invalid_request",
    "tools.1",
  ],
  [
    "Responses flat tool shape",
    base({ tools: [{ type: "function", name: "f", parameters: { type: "object" } }] }),
    "invalid_request",
    "tools.0",
  ],
  ["tools not an array", base({ tools: {} }), "invalid_request", "tools"],
  ["tool name with a dot", base({ tools: [fn("a.b")] }), "invalid_request", "tools.0.function.name"],
  ["tool name too long", base({ tools: [fn("x".repeat(65))] }), "invalid_request", "tools.0.function.name"],
  [
    "tool parameters string",
    base({ tools: [fn("f", { parameters: "{}" })] }),
    "invalid_request",
    "tools.0.function.parameters",
  ],
  [
    "tool type custom",
    base({ tools: [{ type: "custom", function: { name: "f" } }] }),
    "invalid_request",
    "tools.0.type",
  ],
  ["tool_choice any", base({ tool_choice: "any" }), "invalid_request", "tool_choice"],
  [
    "tool_choice Anthropic object",
    base({ tool_choice: { type: "tool", name: "f" } }),
    "invalid_request",
    "tool_choice",
  ],
  [
    "parallel_tool_calls string",
    base({ parallel_tool_calls: "no" }),
    "invalid_request",
    "parallel_tool_calls",
  ],
  ["max_tokens zero", base({ max_tokens: 0 }), "invalid_parameter", "max_tokens"],
  [
    "max_completion_tokens fraction",
    base({ max_completion_tokens: 1.5 }),
    "invalid_parameter",
    "max_completion_tokens",
  ],
  [
    "max_completion_tokens string",
    base({ max_completion_tokens: "100" }),
    "invalid_parameter",
    "max_completion_tokens",
  ],
  ["stream string", base({ stream: "true" }), "invalid_request", "stream"],
  ["stream_options array", base({ stream: true, stream_options: [] }), "invalid_request", "stream_options"],
  [
    "include_usage string",
    base({ stream: true, stream_options: { include_usage: "yes" } }),
    "invalid_request",
    "stream_options.include_usage",
  ],
  ["temperature string", base({ temperature: "1" }), "invalid_request", "temperature"],
  ["temperature out of range", base({ temperature: 3 }), "invalid_parameter", "temperature"],
  ["top_p out of range", base({ top_p: -0.1 }), "invalid_parameter", "top_p"],
  ["stop number", base({ stop: 5 }), "invalid_request", "stop"],
  ["stop array with number", base({ stop: ["a", 1] }), "invalid_request", "stop.1"],
  ["reasoning_effort number", base({ reasoning_effort: 1 }), "invalid_request", "reasoning_effort"],
  ["user number", base({ user: 1 }), "invalid_request", "user"],
  ["model number", base({ model: 1 }), "invalid_request", "model"],
];

for (const [name, body, code, param] of REJECTIONS) {
  Deno.test(`decodeRequest rejects ${name} (${code} ${param})`, () => {
    assert.throws(
      () => decodeRequest(body),
      (e: unknown) => e instanceof GatewayError && e.code === code && e.param === param,
    );
  });
}
