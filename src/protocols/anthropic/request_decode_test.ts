import assert from "node:assert/strict";
import { GatewayError } from "../../errors/gateway_error.ts";
import { decodeRequest } from "./request_decode.ts";

const base = () => ({
  model: "alpha-large",
  max_tokens: 256,
  messages: [{ role: "user", content: "hi" }],
});

function rejects(body: Record<string, unknown>, code: string, param: string) {
  assert.throws(() => decodeRequest(body), (e: unknown) => {
    assert.ok(e instanceof GatewayError, String(e));
    assert.deepEqual([e.code, e.param], [code, param], JSON.stringify(body));
    return true;
  });
}

Deno.test("decodeRequest rejects bad bodies with invalid_request and the field path", () => {
  const user = (content: unknown) => ({ ...base(), messages: [{ role: "user", content }] });
  const cases: [Record<string, unknown>, string][] = [
    [{ model: "m", messages: [] }, "max_tokens"],
    [{ ...base(), messages: [] }, "messages"],
    [{ ...base(), max_tokens: 0 }, "max_tokens"],
    [{ ...base(), max_tokens: 1.5 }, "max_tokens"],
    [{ ...base(), max_tokens: "100" }, "max_tokens"],
    [{ ...base(), messages: [{ role: "developer", content: "x" }] }, "messages.0.role"],
    [
      { ...base(), messages: [{ role: "user", content: "a" }, { role: "user", content: 5 }] },
      "messages.1.content",
    ],
    [user([{ type: "text", text: "a" }, { type: "audio", data: "x" }]), "messages.0.content.1.type"],
    [user([{ type: "text", text: "" }]), "messages.0.content.0.text"],
    [user(""), "messages.0.content"],
    [user([{ text: "no type" }]), "messages.0.content.0.type"],
    [
      user([{ type: "image", source: { type: "base64", media_type: "image/bmp", data: "x" } }]),
      "messages.0.content.0.source.media_type",
    ],
    [user([{ type: "image", source: { type: "file", file_id: "f" } }]), "messages.0.content.0.source.type"],
    [user([{ type: "tool_use", id: "t", name: "f", input: {} }]), "messages.0.content.0.type"],
    [
      user([{ type: "tool_result", tool_use_id: "t", content: [{ type: "video" }] }]),
      "messages.0.content.0.content.0.type",
    ],
    [user([{ type: "tool_result", tool_use_id: "t", is_error: "yes" }]), "messages.0.content.0.is_error"],
    [
      user([{ type: "document", source: { type: "base64", media_type: "application/pdf", data: "x" } }]),
      "messages.0.content.0.source.type",
    ],
    [user([{ type: "input_file" }]), "messages.0.content.0.file_id"],
    [{
      ...base(),
      messages: [{ role: "user", content: "a" }, {
        role: "assistant",
        content: [{ type: "tool_use", id: "Bash:12", name: "f", input: {} }],
      }],
    }, "messages.1.content.0.id"],
    [{
      ...base(),
      messages: [{ role: "user", content: "a" }, {
        role: "assistant",
        content: [{ type: "tool_use", id: "t1", name: "f", input: "{}" }],
      }],
    }, "messages.1.content.0.input"],
    [
      { ...base(), messages: [{ role: "assistant", content: [{ type: "image", source: {} }] }] },
      "messages.0.content.0.type",
    ],
    [{ ...base(), system: [{ type: "image" }] }, "system.0.type"],
    [{ ...base(), system: 7 }, "system"],
    [{ ...base(), tools: [{ type: "function", function: { name: "f", parameters: {} } }] }, "tools.0"],
    [{ ...base(), tools: [{ name: "a.b", input_schema: { type: "object" } }] }, "tools.0.name"],
    [{ ...base(), tools: [{ name: "f" }] }, "tools.0.input_schema"],
    [{ ...base(), tools: [{ name: "f", input_schema: { type: "string" } }] }, "tools.0.input_schema.type"],
    [{
      ...base(),
      tools: [{ name: "f", input_schema: { type: "object" } }, {
        name: "f",
        input_schema: { type: "object" },
      }],
    }, "tools.1.name"],
    [{ ...base(), tools: {} }, "tools"],
    [{ ...base(), tool_choice: { type: "required" } }, "tool_choice.type"],
    [{ ...base(), tool_choice: { type: "tool" } }, "tool_choice.name"],
    [{ ...base(), tool_choice: "auto" }, "tool_choice"],
    [{ ...base(), thinking: { type: "enabled" } }, "thinking.budget_tokens"],
    [{ ...base(), thinking: { type: "enabled", budget_tokens: 100 } }, "thinking.budget_tokens"],
    [{ ...base(), thinking: { type: "on" } }, "thinking.type"],
    [{ ...base(), thinking: true }, "thinking"],
    [{ ...base(), output_config: { effort: "extreme" } }, "output_config.effort"],
    [{ ...base(), temperature: "0.5" }, "temperature"],
    [{ ...base(), temperature: 1.5 }, "temperature"],
    [{ ...base(), top_p: -0.1 }, "top_p"],
    [{ ...base(), top_k: 2.5 }, "top_k"],
    [{ ...base(), stop_sequences: "END" }, "stop_sequences"],
    [{ ...base(), stop_sequences: ["a", 1] }, "stop_sequences.1"],
    [{ ...base(), metadata: { user_id: 5 } }, "metadata.user_id"],
    [{ ...base(), metadata: "u" }, "metadata"],
    [{ ...base(), stream: "true" }, "stream"],
  ];
  for (const [body, param] of cases) rejects(body, "invalid_request", param);
});

Deno.test("decodeRequest decodes a full body", () => {
  const req = decodeRequest({
    model: "alpha-large",
    max_tokens: 1024,
    system: [{ type: "text", text: "You are terse.", cache_control: { type: "ephemeral" } }],
    messages: [
      {
        role: "user",
        content: [{ type: "text", text: "Weather?" }, { type: "input_file", file_id: "file_1" }],
      },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "hmm", signature: "sig" },
          { type: "redacted_thinking", data: "opaque" },
          { type: "tool_use", id: "toolu_01A", name: "get_weather", input: { city: "Paris" } },
        ],
      },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "toolu_01A", content: "18°C", is_error: false }],
      },
    ],
    tools: [
      { name: "get_weather", description: "Weather", input_schema: { type: "object", properties: {} } },
      { type: "web_search_20250305", name: "web_search", max_uses: 3 },
    ],
    tool_choice: { type: "any", disable_parallel_tool_use: true },
    thinking: { type: "enabled", budget_tokens: 2048 },
    temperature: 1,
    top_p: 0.99,
    top_k: 5,
    stop_sequences: ["\n\nHuman:"],
    metadata: { user_id: "u-7f3a" },
    stream: true,
    some_future_field: { x: 1 },
  });
  assert.deepEqual(req, {
    model: "alpha-large",
    system: ["You are terse."],
    messages: [
      { role: "user", parts: [{ type: "text", text: "Weather?" }, { type: "file", fileId: "file_1" }] },
      {
        role: "assistant",
        parts: [
          { type: "reasoning", text: "hmm", signature: "sig" },
          { type: "tool_call", id: "toolu_01A", name: "get_weather", arguments: '{"city":"Paris"}' },
        ],
      },
      {
        role: "user",
        parts: [{ type: "tool_result", callId: "toolu_01A", content: "18°C", isError: false }],
      },
    ],
    stream: true,
    includeUsage: false,
    maxOutputTokens: 1024,
    tools: [{ name: "get_weather", description: "Weather", parameters: { type: "object", properties: {} } }],
    toolChoice: { type: "required" },
    parallelToolCalls: false,
    stop: ["\n\nHuman:"],
    thinkingBudget: 2048,
    reasoningEffort: "medium",
    temperature: 1,
    topP: 0.99,
    topK: 5,
    user: "u-7f3a",
  });
});

Deno.test("decodeRequest maps adaptive and disabled thinking to an effort", () => {
  const adaptive = decodeRequest({
    ...base(),
    thinking: { type: "adaptive" },
    output_config: { effort: "low" },
  });
  assert.equal(adaptive.reasoningEffort, "low");
  assert.equal(adaptive.thinkingBudget, undefined);
  assert.equal(decodeRequest({ ...base(), thinking: { type: "disabled" } }).reasoningEffort, "none");
  assert.equal(
    decodeRequest({ ...base(), thinking: { type: "enabled", budget_tokens: 10000 } }).reasoningEffort,
    "high",
  );
  assert.equal(decodeRequest(base()).reasoningEffort, undefined);
});
