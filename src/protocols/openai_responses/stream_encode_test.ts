import assert from "node:assert/strict";
import type { ErrorObject } from "../../errors/error_object.ts";
import type { IREvent } from "../../ir/events.ts";
import { replaySse } from "../sse_parse.ts";
import { createStreamEncoder } from "./stream_encode.ts";
import { decodeFrames, type Parsed, parseSse, testCtx } from "./test_helpers.ts";

function encode(events: IREvent[], ctx = testCtx()): string {
  const enc = createStreamEncoder(ctx);
  return events.map((e) => enc.push(e)).join("");
}

function checkLifecycle(frames: Parsed[], terminal: string): void {
  frames.forEach((f, i) => {
    assert.equal(f.data.sequence_number, i, `sequence_number of frame ${i}`);
    assert.equal(f.event, f.data.type);
  });
  assert.deepEqual(frames.slice(0, 2).map((f) => f.event), ["response.created", "response.in_progress"]);
  assert.equal(frames[0]!.data.response.status, "in_progress");
  assert.deepEqual(frames[0]!.data.response.output, []);
  assert.equal(frames[0]!.data.response.usage, null);
  assert.equal(frames.at(-1)!.event, terminal);
  assert.equal(frames.filter((f) => /^response\.(completed|incomplete|failed)$/.test(f.event!)).length, 1);
}

const start: IREvent = { type: "start", id: "up_1", model: "upstream" };
const usage: IREvent = {
  type: "usage",
  usage: { inputTokens: 12, cachedInputTokens: 4, outputTokens: 7, reasoningTokens: 2 },
};

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

const SEARCH_OK: IREvent = {
  type: "server_tool",
  id: "srvtoolu_1",
  name: "web_search",
  input: { query: "ios 26" },
  result: { ok: true, sources: [{ url: "https://a", title: "A" }, { url: "https://b" }] },
};
const SEARCH_FAILED: IREvent = {
  type: "server_tool",
  id: "srvtoolu_2",
  name: "web_search",
  input: { query: "x" },
  result: { ok: false, errorCode: "too_many_requests" },
};
const FETCH_OK: IREvent = {
  type: "server_tool",
  id: "srvtoolu_3",
  name: "web_fetch",
  input: { url: "https://c/page" },
  result: { ok: true, sources: [{ url: "https://c/page", title: "C" }] },
};
const CITED = "iOS 😀"; // 6 UTF-16 units

Deno.test("server tools: web_search_call items with their lifecycle; citations as url_citation annotations", async () => {
  const text = encode([
    start,
    { type: "text_delta", text: "Ищу. " },
    SEARCH_OK,
    { type: "text_delta", text: "Вот что " },
    { type: "text_delta", text: "нашлось: " },
    { type: "text_delta", text: CITED },
    {
      type: "citations",
      textLength: CITED.length,
      citations: [{ url: "https://a", title: "A", citedText: "q" }, { url: "https://b" }],
    },
    { type: "text_delta", text: "." },
    SEARCH_FAILED,
    FETCH_OK,
    {
      type: "server_tool",
      id: "srvtoolu_4",
      name: "code_execution",
      input: {},
      result: { ok: true, sources: [] },
    },
    usage,
    { type: "finish", reason: "stop" },
  ]);
  const frames = await parseSse(text);
  checkLifecycle(frames, "response.completed");
  assert.deepEqual(frames.map((f) => [f.event, f.data.output_index]), [
    ["response.created", undefined],
    ["response.in_progress", undefined],
    ["response.output_item.added", 0],
    ["response.content_part.added", 0],
    ["response.output_text.delta", 0],
    ["response.output_text.done", 0],
    ["response.content_part.done", 0],
    ["response.output_item.done", 0],
    ["response.output_item.added", 1],
    ["response.web_search_call.in_progress", 1],
    ["response.web_search_call.searching", 1],
    ["response.web_search_call.completed", 1],
    ["response.output_item.done", 1],
    ["response.output_item.added", 2],
    ["response.content_part.added", 2],
    ["response.output_text.delta", 2],
    ["response.output_text.delta", 2],
    ["response.output_text.delta", 2],
    ["response.output_text.annotation.added", 2],
    ["response.output_text.annotation.added", 2],
    ["response.output_text.delta", 2],
    ["response.output_text.done", 2],
    ["response.content_part.done", 2],
    ["response.output_item.done", 2],
    ["response.output_item.added", 3],
    ["response.web_search_call.in_progress", 3],
    ["response.web_search_call.searching", 3],
    ["response.output_item.done", 3],
    ["response.output_item.added", 4],
    ["response.web_search_call.in_progress", 4],
    ["response.web_search_call.searching", 4],
    ["response.web_search_call.completed", 4],
    ["response.output_item.done", 4],
    ["response.completed", undefined],
  ]);
  assert.deepEqual(frames[8]!.data.item, {
    id: "ws_3",
    type: "web_search_call",
    status: "in_progress",
    action: { type: "search", query: "ios 26", queries: ["ios 26"] },
  });
  assert.deepEqual(frames[9]!.data, {
    type: "response.web_search_call.in_progress",
    sequence_number: 9,
    item_id: "ws_3",
    output_index: 1,
  });
  const a = { type: "url_citation", start_index: 17, end_index: 23 };
  const annotations = [{ ...a, url: "https://a", title: "A" }, { ...a, url: "https://b", title: "" }];
  assert.deepEqual(frames[18]!.data, {
    type: "response.output_text.annotation.added",
    sequence_number: 18,
    item_id: "msg_4",
    output_index: 2,
    content_index: 0,
    annotation_index: 0,
    annotation: annotations[0],
  });
  assert.equal(frames[19]!.data.annotation_index, 1);
  assert.equal("Вот что нашлось: ".length, 17);
  assert.deepEqual(frames[22]!.data.part.annotations, annotations);
  const res = frames.at(-1)!.data.response;
  assert.deepEqual(res.output, [
    {
      id: "msg_2",
      type: "message",
      status: "completed",
      content: [{ type: "output_text", annotations: [], logprobs: [], text: "Ищу. " }],
      role: "assistant",
    },
    {
      id: "ws_3",
      type: "web_search_call",
      status: "completed",
      action: {
        type: "search",
        query: "ios 26",
        queries: ["ios 26"],
        sources: [{ type: "url", url: "https://a" }, { type: "url", url: "https://b" }],
      },
    },
    {
      id: "msg_4",
      type: "message",
      status: "completed",
      content: [{ type: "output_text", annotations, logprobs: [], text: "Вот что нашлось: iOS 😀." }],
      role: "assistant",
    },
    {
      id: "ws_5",
      type: "web_search_call",
      status: "failed",
      action: { type: "search", query: "x", queries: ["x"] },
    },
    {
      id: "ws_6",
      type: "web_search_call",
      status: "completed",
      action: { type: "open_page", url: "https://c/page" },
    },
  ]);
  // Each item's output_item.done is its final form.
  for (const f of frames.filter((f) => f.event === "response.output_item.done")) {
    assert.deepEqual(f.data.item, res.output[f.data.output_index], `item ${f.data.output_index}`);
  }
});

Deno.test("server tools: an empty search completes with no sources; citations of text behind an open call wait", async () => {
  const frames = await parseSse(encode([
    start,
    {
      type: "server_tool",
      id: "s",
      name: "web_search",
      input: { query: "q" },
      result: { ok: true, sources: [] },
    },
    { type: "tool_call_start", index: 0, id: "call_1", name: "f" },
    { type: "tool_call_delta", index: 0, arguments: "{}" },
    { type: "text_delta", text: "ab" },
    { type: "text_delta", text: "cd" },
    { type: "citations", textLength: 2, citations: [{ url: "https://a", title: "A" }] },
    SEARCH_FAILED,
    { type: "finish", reason: "tool_calls" },
  ]));
  checkLifecycle(frames, "response.completed");
  const res = frames.at(-1)!.data.response;
  assert.deepEqual(res.output.map((i: any) => [i.type, i.status]), [
    ["web_search_call", "completed"],
    ["function_call", "completed"],
    ["message", "completed"],
    ["web_search_call", "failed"],
  ]);
  assert.deepEqual(res.output[0].action.sources, []);
  assert.deepEqual(res.output[2].content[0].annotations, [
    { type: "url_citation", start_index: 2, end_index: 4, url: "https://a", title: "A" },
  ]);
  const added = frames.find((f) => f.event === "response.output_text.annotation.added")!;
  assert.equal(added.data.output_index, 2);
  assert.equal(added.data.annotation_index, 0);
});
