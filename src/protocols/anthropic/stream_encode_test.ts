import assert from "node:assert/strict";
import type { ErrorObject } from "../../errors/error_object.ts";
import type { IREvent } from "../../ir/events.ts";
import { replaySse } from "../sse_parse.ts";
import { createStreamEncoder } from "./stream_encode.ts";
import { sanitizeToolId } from "./tool_id.ts";
import { decodeFrames, fixture, parsedFrames, testContext } from "./testing/helpers.ts";

function encode(events: IREvent[]): string {
  const enc = createStreamEncoder(testContext());
  return events.map((e) => enc.push(e)).join("");
}

const START = {
  type: "message_start",
  message: {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "alpha-large",
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 },
  },
};
const STOP = ["message_stop", { type: "message_stop" }];

function blockStart(index: number, content_block: unknown) {
  return ["content_block_start", { type: "content_block_start", index, content_block }];
}
function delta(index: number, d: unknown) {
  return ["content_block_delta", { type: "content_block_delta", index, delta: d }];
}
function blockStop(index: number) {
  return ["content_block_stop", { type: "content_block_stop", index }];
}
function messageDelta(
  stop_reason: string,
  usage: Record<string, number>,
  stop_sequence: string | null = null,
) {
  return ["message_delta", {
    type: "message_delta",
    delta: { stop_reason, stop_sequence },
    usage: {
      input_tokens: 0,
      output_tokens: 0,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
      ...usage,
    },
  }];
}

Deno.test("AnthropicStreamEncoder emits a text stream with the input count on message_start", async () => {
  const out = encode([
    { type: "start", id: "up", model: "m" },
    { type: "usage", usage: { inputTokens: 12 } },
    { type: "text_delta", text: "Hello" },
    { type: "text_delta", text: "" },
    { type: "text_delta", text: "! How can I help?" },
    { type: "usage", usage: { outputTokens: 30 } },
    { type: "finish", reason: "stop" },
  ]);
  const start = structuredClone(START);
  start.message.usage.input_tokens = 12;
  assert.deepEqual(await parsedFrames(out), [
    ["message_start", start],
    blockStart(0, { type: "text", text: "" }),
    delta(0, { type: "text_delta", text: "Hello" }),
    delta(0, { type: "text_delta", text: "! How can I help?" }),
    blockStop(0),
    messageDelta("end_turn", { input_tokens: 12, output_tokens: 30 }),
    STOP,
  ]);
});

Deno.test("AnthropicStreamEncoder serialises interleaved parallel tool calls into sequential blocks", async () => {
  const out = encode([
    { type: "start", id: "up", model: "m" },
    { type: "text_delta", text: "Checking both." },
    { type: "tool_call_start", index: 0, id: "call_a", name: "weather" },
    { type: "tool_call_delta", index: 0, arguments: '{"city":' },
    { type: "tool_call_start", index: 1, id: "call_b", name: "time" },
    { type: "tool_call_delta", index: 1, arguments: '{"tz":' },
    { type: "tool_call_delta", index: 0, arguments: '"Paris"}' },
    { type: "tool_call_delta", index: 1, arguments: '"CET"}' },
    { type: "tool_call_start", index: 2, id: "Bash:12", name: "noargs" },
    { type: "usage", usage: { inputTokens: 50, outputTokens: 20 } },
    { type: "finish", reason: "tool_calls" },
  ]);
  assert.deepEqual((await parsedFrames(out)).slice(1), [
    blockStart(0, { type: "text", text: "" }),
    delta(0, { type: "text_delta", text: "Checking both." }),
    blockStop(0),
    blockStart(1, { type: "tool_use", id: "call_a", name: "weather", input: {} }),
    delta(1, { type: "input_json_delta", partial_json: '{"city":' }),
    delta(1, { type: "input_json_delta", partial_json: '"Paris"}' }),
    blockStop(1),
    blockStart(2, { type: "tool_use", id: "call_b", name: "time", input: {} }),
    delta(2, { type: "input_json_delta", partial_json: '{"tz":"CET"}' }),
    blockStop(2),
    blockStart(3, { type: "tool_use", id: sanitizeToolId("Bash:12"), name: "noargs", input: {} }),
    blockStop(3),
    messageDelta("tool_use", { input_tokens: 50, output_tokens: 20 }),
    STOP,
  ]);
  // Decoding our own output gives back each call's complete arguments.
  const events = decodeFrames(await replaySse(out));
  const args = (i: number) =>
    events.filter((e) => e.type === "tool_call_delta" && e.index === i).map((e) =>
      (e as { arguments: string }).arguments
    )
      .join("");
  assert.deepEqual([JSON.parse(args(0)), JSON.parse(args(1)), args(2)], [
    { city: "Paris" },
    { tz: "CET" },
    "",
  ]);
});

Deno.test("AnthropicStreamEncoder opens a buffered tool call as soon as no other tool block is open", async () => {
  const out = encode([
    { type: "start", id: "up", model: "m" },
    { type: "tool_call_start", index: 0, id: "a", name: "f" },
    { type: "tool_call_start", index: 1, id: "b", name: "g" },
    { type: "tool_call_delta", index: 1, arguments: "{}" },
    { type: "text_delta", text: "between" },
    { type: "tool_call_delta", index: 1, arguments: "" },
    { type: "finish", reason: "tool_calls" },
  ]);
  const frames = (await parsedFrames(out)).slice(1, -2);
  assert.deepEqual(frames, [
    blockStart(0, { type: "tool_use", id: "a", name: "f", input: {} }),
    blockStop(0),
    blockStart(1, { type: "text", text: "" }),
    delta(1, { type: "text_delta", text: "between" }),
    blockStop(1),
    blockStart(2, { type: "tool_use", id: "b", name: "g", input: {} }),
    delta(2, { type: "input_json_delta", partial_json: "{}" }),
    blockStop(2),
  ]);
});

Deno.test("AnthropicStreamEncoder emits thinking with signature_delta before closing the block", async () => {
  const out = encode([
    { type: "start", id: "up", model: "m" },
    { type: "reasoning_delta", text: "Let me think" },
    { type: "reasoning_signature", signature: "sig==" },
    { type: "text_delta", text: "21" },
    { type: "finish", reason: "stop" },
  ]);
  assert.deepEqual((await parsedFrames(out)).slice(1, -2), [
    blockStart(0, { type: "thinking", thinking: "", signature: "" }),
    delta(0, { type: "thinking_delta", thinking: "Let me think" }),
    delta(0, { type: "signature_delta", signature: "sig==" }),
    blockStop(0),
    blockStart(1, { type: "text", text: "" }),
    delta(1, { type: "text_delta", text: "21" }),
    blockStop(1),
  ]);
  assert.ok(!encode([{ type: "reasoning_delta", text: "x" }]).includes("signature_delta"));
});

Deno.test("AnthropicStreamEncoder reports a max_tokens stop with cache usage split back out", async () => {
  const out = encode([
    { type: "start", id: "up", model: "m" },
    { type: "text_delta", text: "Once upon a" },
    {
      type: "usage",
      usage: { inputTokens: 2005, cachedInputTokens: 1800, cacheWriteTokens: 200, outputTokens: 4 },
    },
    { type: "finish", reason: "length" },
  ]);
  const frames = await parsedFrames(out);
  assert.deepEqual(
    frames.at(-2),
    messageDelta("max_tokens", {
      input_tokens: 5,
      output_tokens: 4,
      cache_read_input_tokens: 1800,
      cache_creation_input_tokens: 200,
    }),
  );
  assert.deepEqual(frames.at(-1), STOP);
});

Deno.test("AnthropicStreamEncoder error frames: alone before start, nothing after", async () => {
  const err: ErrorObject = {
    message: "boom [stream_service_error · req_1]",
    code: "stream_service_error",
    type: "api_error",
    param: null,
    action: "retry",
    request_id: "req_1",
  };
  const enc = createStreamEncoder(testContext());
  const text = enc.error(err);
  assert.deepEqual(await parsedFrames(text), [["error", { type: "error", error: err, request_id: "req_1" }]]);
  assert.equal(enc.push({ type: "text_delta", text: "late" }), "");

  const enc2 = createStreamEncoder(testContext());
  enc2.push({ type: "start", id: "u", model: "m" });
  const head = enc2.push({ type: "text_delta", text: "Hel" });
  assert.equal(enc2.push({ type: "error", message: "x" }), "");
  const tail = enc2.error(err);
  const frames = await parsedFrames(head + tail);
  assert.deepEqual(frames.map((f) => f[0]), [
    "message_start",
    "content_block_start",
    "content_block_delta",
    "error",
  ]);
  assert.equal(enc2.push({ type: "finish", reason: "stop" }), "");
});

Deno.test("AnthropicStreamEncoder round-trips every recording through the decoder", async () => {
  for (const name of ["text.sse", "tool_use.sse", "thinking.sse", "web_search.sse", "max_tokens.sse"]) {
    const upstream = decodeFrames(await replaySse(fixture(name)));
    const again = decodeFrames(await replaySse(encode(upstream)));
    // Server tools and citations come only from an Anthropic upstream, whose Messages clients are relayed
    // natively: the translated Messages stream does not show them.
    const hidden = new Set(["start", "usage", "server_tool", "citations"]);
    const content = (es: IREvent[]) => es.filter((e) => !hidden.has(e.type));
    assert.deepEqual(content(again), content(upstream), name);
    const lastUsage = (es: IREvent[]) => es.filter((e) => e.type === "usage").at(-1);
    const { reasoningTokens: _r, webSearchRequests: _w, ...expected } =
      (lastUsage(upstream) as { usage: Record<string, number> }).usage;
    assert.deepEqual((lastUsage(again) as { usage: Record<string, number> }).usage, expected, name);
  }
});
