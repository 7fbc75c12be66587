import assert from "node:assert/strict";
import type { IREvent } from "../../ir/events.ts";
import { UpstreamProtocolError } from "../codec.ts";
import { replaySse } from "../sse_parse.ts";
import { createStreamDecoder } from "./stream_decode.ts";
import { fixture } from "./testing/helpers.ts";

async function decode(text: string, cuts: number[] = []): Promise<IREvent[]> {
  const d = createStreamDecoder();
  const out: IREvent[] = [];
  for (const f of await replaySse(text, cuts)) out.push(...d.push(f));
  out.push(...d.end());
  return out;
}

const EXPECTED: Record<string, IREvent[]> = {
  "text_include_usage.sse": [
    { type: "start", id: "chatcmpl-D8Z5", model: "gpt-4.1-nano-2025-04-14" },
    { type: "text_delta", text: "Holiday" },
    {
      type: "usage",
      usage: { inputTokens: 16, outputTokens: 300, cachedInputTokens: 0, reasoningTokens: 0 },
    },
    { type: "finish", reason: "stop" },
  ],
  "parallel_tool_calls.sse": [
    { type: "start", id: "chatcmpl-X", model: "gpt-4o" },
    { type: "tool_call_start", index: 0, id: "call_a1", name: "get_weather" },
    { type: "tool_call_delta", index: 0, arguments: '{"city": "Pa' },
    { type: "tool_call_delta", index: 0, arguments: 'ris"}' },
    { type: "tool_call_start", index: 1, id: "call_b2", name: "get_time" },
    { type: "tool_call_delta", index: 1, arguments: '{"tz":"CET"}' },
    { type: "finish", reason: "tool_calls" },
  ],
  "mid_stream_error.sse": [
    { type: "start", id: "chatcmpl-E1", model: "gpt-4.1-nano-2025-04-14" },
    { type: "text_delta", text: "Partial ответ" },
    {
      type: "error",
      message: "The server had an error while processing your request.",
      upstreamType: "server_error",
    },
  ],
  "usage_on_finish_chunk.sse": [
    { type: "start", id: "chatcmpl-U7", model: "qwen3-32b" },
    { type: "text_delta", text: "Привет, " },
    { type: "text_delta", text: "мир!" },
    {
      type: "usage",
      usage: { inputTokens: 120, outputTokens: 4, cachedInputTokens: 64, cacheWriteTokens: 32 },
    },
    { type: "finish", reason: "length" },
  ],
  "reasoning_content.sse": [
    { type: "start", id: "chatcmpl-R3", model: "deepseek-reasoner" },
    { type: "reasoning_delta", text: "The user asks 2+2. " },
    { type: "reasoning_delta", text: "That is 4." },
    { type: "text_delta", text: "4" },
    {
      type: "usage",
      usage: { inputTokens: 13, outputTokens: 25, cachedInputTokens: 0, reasoningTokens: 21 },
    },
    { type: "finish", reason: "stop" },
  ],
  "finish_without_done.sse": [
    { type: "start", id: "chatcmpl-F9", model: "llama-3.3-70b" },
    { type: "text_delta", text: "Ok" },
    { type: "finish", reason: "stop" },
  ],
};

for (const [name, expected] of Object.entries(EXPECTED)) {
  Deno.test(`ChatStreamDecoder decodes ${name} identically at any byte split`, async () => {
    const text = await fixture(name);
    assert.deepEqual(await decode(text), expected);
    const len = new TextEncoder().encode(text).length;
    for (const cuts of [[1], [7, 8, 9], [Math.floor(len / 2)], [len - 1], [13, 101, 233, 377, 501]]) {
      assert.deepEqual(await decode(text, cuts), expected, `cuts ${cuts}`);
    }
    for (let cut = 1; cut < len; cut += 17) assert.deepEqual(await decode(text, [cut]), expected);
  });
}

function chunk(delta: Record<string, unknown>, extra: Record<string, unknown> = {}): { data: string } {
  return {
    data: JSON.stringify({
      id: "c",
      model: "m",
      choices: [{ index: 0, delta, finish_reason: null }],
      ...extra,
    }),
  };
}

Deno.test("ChatStreamDecoder end() emits nothing when the stream was cut before finish_reason", () => {
  const d = createStreamDecoder();
  assert.equal(d.push(chunk({ content: "a" })).length, 2);
  assert.deepEqual(d.end(), []);
});

Deno.test("ChatStreamDecoder derives tool_calls when a tool call came with finish_reason stop", () => {
  const d = createStreamDecoder();
  const events = [
    ...d.push(chunk({ tool_calls: [{ index: 0, id: "call_1", function: { name: "f", arguments: "{}" } }] })),
    ...d.push({
      data: JSON.stringify({ id: "c", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }),
    }),
    ...d.push({ data: "[DONE]" }),
  ];
  assert.deepEqual(events.slice(1), [
    { type: "tool_call_start", index: 0, id: "call_1", name: "f" },
    { type: "tool_call_delta", index: 0, arguments: "{}" },
    { type: "finish", reason: "tool_calls" },
  ]);
});

Deno.test("ChatStreamDecoder maps interleaved upstream indexes and `reasoning` deltas", () => {
  const d = createStreamDecoder();
  const events = [
    ...d.push(chunk({ reasoning: "hmm" })),
    ...d.push(chunk({
      tool_calls: [
        { index: 3, id: "call_x", type: "function", function: { name: "a", arguments: "" } },
        { index: 5, id: "call_y", type: "function", function: { name: "b", arguments: "{" } },
      ],
    })),
    ...d.push(chunk({ tool_calls: [{ index: 5, function: { arguments: "}" } }] })),
    ...d.push(chunk({ tool_calls: [{ index: 3, function: { arguments: "{}" } }] })),
  ];
  assert.deepEqual(events.slice(1), [
    { type: "reasoning_delta", text: "hmm" },
    { type: "tool_call_start", index: 0, id: "call_x", name: "a" },
    { type: "tool_call_start", index: 1, id: "call_y", name: "b" },
    { type: "tool_call_delta", index: 1, arguments: "{" },
    { type: "tool_call_delta", index: 1, arguments: "}" },
    { type: "tool_call_delta", index: 0, arguments: "{}" },
  ]);
});

Deno.test("ChatStreamDecoder ignores frames after [DONE] and a lone [DONE]", () => {
  const d = createStreamDecoder();
  assert.deepEqual(d.push({ data: "[DONE]" }), []);
  assert.deepEqual(d.end(), []);
  const e = createStreamDecoder();
  e.push(chunk({ content: "x" }));
  assert.equal(e.push({ data: "[DONE]" }).length, 1);
  assert.deepEqual(e.push(chunk({ content: "late" })), []);
  assert.deepEqual(e.end(), []);
});

Deno.test("ChatStreamDecoder throws UpstreamProtocolError on a non-JSON chunk", () => {
  assert.throws(() => createStreamDecoder().push({ data: "{oops" }), UpstreamProtocolError);
});

Deno.test("ChatStreamDecoder maps a streamed refusal to text and content_filter", () => {
  const d = createStreamDecoder();
  const events = [...d.push(chunk({ refusal: "No." })), ...d.push({ data: "[DONE]" })];
  assert.deepEqual(events.slice(1), [
    { type: "text_delta", text: "No." },
    { type: "finish", reason: "content_filter" },
  ]);
});

Deno.test("ChatStreamDecoder synthesizes a per-response id for a tool call without one", () => {
  const d = createStreamDecoder();
  const events = d.push({
    data: JSON.stringify({
      id: "chatcmpl-9.z",
      choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { name: "f" } }] } }],
    }),
  });
  assert.deepEqual(events[1], { type: "tool_call_start", index: 0, id: "call_chatcmpl-9z_0", name: "f" });
});
