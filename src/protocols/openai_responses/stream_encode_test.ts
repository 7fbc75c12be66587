import assert from "node:assert/strict";
import type { ErrorObject } from "../../errors/error_object.ts";
import type { IREvent } from "../../ir/events.ts";
import { replaySse } from "../sse_parse.ts";
import { createStreamEncoder } from "./stream_encode.ts";
import { checkLifecycle, decodeFrames, encode, parseSse, start, testCtx, usage } from "./testing/helpers.ts";

Deno.test("text stream: full lifecycle, continuous sequence numbers, completed with output and usage", async () => {
  const text = encode([
    start,
    { type: "text_delta", text: "Hello" },
    { type: "text_delta", text: ", world" },
    usage,
    { type: "finish", reason: "stop" },
  ]);
  const frames = await parseSse(text);
  checkLifecycle(frames, "response.completed");
  assert.deepEqual(frames.map((f) => f.event), [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.content_part.added",
    "response.output_text.delta",
    "response.output_text.delta",
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.completed",
  ]);
  assert.deepEqual(frames[4]!.data, {
    type: "response.output_text.delta",
    sequence_number: 4,
    item_id: "msg_2",
    output_index: 0,
    content_index: 0,
    delta: "Hello",
    logprobs: [],
  });
  assert.equal(frames[6]!.data.text, "Hello, world");
  const res = frames.at(-1)!.data.response;
  assert.equal(res.id, "resp_1");
  assert.equal(res.model, "client-model");
  assert.equal(res.status, "completed");
  assert.equal(res.completed_at, 1_700_000_000);
  assert.deepEqual(res.output, [{
    id: "msg_2",
    type: "message",
    status: "completed",
    content: [{ type: "output_text", annotations: [], logprobs: [], text: "Hello, world" }],
    role: "assistant",
  }]);
  assert.deepEqual(res.usage, {
    input_tokens: 12,
    input_tokens_details: { cached_tokens: 4 },
    output_tokens: 7,
    output_tokens_details: { reasoning_tokens: 2 },
    total_tokens: 19,
  });
});

Deno.test("reasoning then text then a function call: items closed in order, call has call_id and {} args", async () => {
  const frames = await parseSse(encode([
    start,
    { type: "reasoning_delta", text: "think" },
    { type: "reasoning_signature", signature: "sig" },
    { type: "text_delta", text: "Let me check." },
    { type: "tool_call_start", index: 0, id: "toolu_1", name: "now" },
    { type: "finish", reason: "tool_calls" },
  ]));
  checkLifecycle(frames, "response.completed");
  const done = frames.filter((f) => f.event === "response.output_item.done").map((f) => f.data.item);
  assert.deepEqual(done.map((i) => i.type), ["reasoning", "message", "function_call"]);
  assert.deepEqual(done[0].summary, [{ type: "summary_text", text: "think" }]);
  assert.deepEqual(done[2], {
    id: "fc_4",
    type: "function_call",
    status: "completed",
    arguments: "{}",
    call_id: "toolu_1",
    name: "now",
  });
  const argsDone = frames.find((f) => f.event === "response.function_call_arguments.done")!.data;
  assert.equal(argsDone.arguments, "{}");
  assert.equal(argsDone.name, "now");
  assert.deepEqual(frames.at(-1)!.data.response.output, done);
});

Deno.test("interleaved parallel tool-call fragments: one item at a time, every call gets its full arguments", async () => {
  const frames = await parseSse(encode([
    start,
    { type: "tool_call_start", index: 0, id: "call_a", name: "weather" },
    { type: "tool_call_delta", index: 0, arguments: '{"city":' },
    { type: "tool_call_start", index: 1, id: "call_b", name: "time" },
    { type: "tool_call_delta", index: 1, arguments: '{"tz":' },
    { type: "tool_call_delta", index: 0, arguments: '"Paris"}' },
    { type: "text_delta", text: "after" },
    { type: "tool_call_delta", index: 1, arguments: '"UTC"}' },
    { type: "tool_call_delta", index: 2, arguments: '{"early":1}' }, // delta before its start
    { type: "tool_call_start", index: 2, id: "call_c", name: "noop" },
    { type: "finish", reason: "tool_calls" },
  ]));
  checkLifecycle(frames, "response.completed");
  // Never two items open at once.
  let open = 0;
  for (const f of frames) {
    if (f.event === "response.output_item.added") assert.equal(++open, 1);
    if (f.event === "response.output_item.done") open--;
  }
  const calls = frames.filter((f) => f.event === "response.output_item.done").map((f) => f.data.item);
  assert.deepEqual(calls.map((c) => [c.type, c.call_id, c.arguments]), [
    ["function_call", "call_a", '{"city":"Paris"}'],
    ["function_call", "call_b", '{"tz":"UTC"}'],
    ["message", undefined, undefined],
    ["function_call", "call_c", '{"early":1}'],
  ]);
  // Deltas of each item concatenate to its done arguments.
  for (const c of calls.filter((c) => c.type === "function_call")) {
    const deltas = frames.filter((f) =>
      f.event === "response.function_call_arguments.delta" && f.data.item_id === c.id
    );
    assert.equal(deltas.map((f) => f.data.delta).join(""), c.arguments);
  }
  // And a Responses decoder reading our stream reconstructs the same calls.
  const ir = decodeFrames(
    await replaySse(frames.map((f) => `event: ${f.event}\ndata: ${JSON.stringify(f.data)}\n\n`).join("")),
  );
  const args = new Map<number, string>();
  for (const e of ir) {
    if (e.type === "tool_call_delta") args.set(e.index, (args.get(e.index) ?? "") + e.arguments);
  }
  assert.deepEqual([...args.values()], ['{"city":"Paris"}', '{"tz":"UTC"}', '{"early":1}']);
});

Deno.test("length finish → response.incomplete with incomplete_details, last message incomplete", async () => {
  const frames = await parseSse(encode([
    start,
    { type: "text_delta", text: "The first part of" },
    usage,
    { type: "finish", reason: "length" },
  ]));
  checkLifecycle(frames, "response.incomplete");
  const res = frames.at(-1)!.data.response;
  assert.equal(res.status, "incomplete");
  assert.deepEqual(res.incomplete_details, { reason: "max_output_tokens" });
  assert.equal(res.completed_at, null);
  assert.equal(res.output[0].status, "incomplete");
  const filtered = await parseSse(encode([start, { type: "finish", reason: "content_filter" }]));
  assert.deepEqual(filtered.at(-1)!.data.response.incomplete_details, { reason: "content_filter" });
});

const err: ErrorObject = {
  message: "Поток ответа прервался из-за сбоя. [stream_service_error · req_test]",
  code: "stream_service_error",
  type: "api_error",
  param: null,
  action: "Повторите запрос; уже полученная часть ответа неполная.",
  request_id: "req_test",
};

Deno.test("error mid-stream → error event then response.failed, numbering continues, nothing after", async () => {
  const enc = createStreamEncoder(testCtx());
  let text = enc.push(start) + enc.push({ type: "text_delta", text: "partial" });
  text += enc.error(err);
  assert.equal(enc.push({ type: "finish", reason: "stop" }), "");
  assert.equal(enc.error(err), "");
  const frames = await parseSse(text);
  checkLifecycle(frames, "response.failed");
  assert.deepEqual(frames.at(-2)!.data, {
    type: "error",
    sequence_number: 5,
    code: err.code,
    message: err.message,
    param: null,
    error: err,
    request_id: "req_test",
  });
  const res = frames.at(-1)!.data.response;
  assert.equal(res.status, "failed");
  assert.deepEqual(res.error, { code: err.code, message: err.message });
  assert.equal(res.output[0].status, "incomplete");
  assert.equal(res.output[0].content[0].text, "partial");
});

Deno.test("error before anything was emitted → error (seq 0) and response.failed (seq 1) built from ctx", async () => {
  const frames = await parseSse(createStreamEncoder(testCtx({ maxOutputTokens: 64 })).error(err));
  assert.deepEqual(frames.map((f) => [f.event, f.data.sequence_number]), [["error", 0], [
    "response.failed",
    1,
  ]]);
  const res = frames[1]!.data.response;
  assert.equal(res.id, "resp_1");
  assert.equal(res.model, "client-model");
  assert.equal(res.max_output_tokens, 64);
  assert.deepEqual(res.output, []);
  assert.equal(res.usage, null);
});

Deno.test("round trip: our stream decodes back to the same content", async () => {
  const events: IREvent[] = [
    { type: "start", id: "x", model: "m" },
    { type: "reasoning_delta", text: "r1" },
    { type: "text_delta", text: "t1" },
    { type: "tool_call_start", index: 0, id: "call_1", name: "f" },
    { type: "tool_call_delta", index: 0, arguments: '{"a":1}' },
    usage,
    { type: "finish", reason: "tool_calls" },
  ];
  const ir = decodeFrames(await replaySse(encode(events)));
  assert.deepEqual(ir.slice(1, 5), events.slice(1, 5));
  assert.deepEqual(ir.at(-1), { type: "finish", reason: "tool_calls" });
  assert.deepEqual(ir.at(-2), { type: "usage", usage: { ...usage.usage, cachedInputTokens: 4 } });
});
