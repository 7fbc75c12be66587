import assert from "node:assert/strict";
import type { ErrorObject } from "../../errors/error_object.ts";
import type { IREvent } from "../../ir/events.ts";
import { createStreamEncoder } from "./stream_encode.ts";
import { dataFrames, testCtx } from "./testing/helpers.ts";

const HEAD = {
  id: "chatcmpl-test1",
  object: "chat.completion.chunk",
  created: 1700000000,
  model: "gw-model",
};

function choice(delta: Record<string, unknown>, finish: string | null = null) {
  return { choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] };
}

function run(events: IREvent[], includeUsage: boolean): string {
  const enc = createStreamEncoder(testCtx({ includeUsage }));
  return events.map((e) => enc.push(e)).join("");
}

const TEXT: IREvent[] = [
  { type: "start", id: "msg_1", model: "upstream-x" },
  { type: "reasoning_delta", text: "think" },
  { type: "reasoning_signature", signature: "sig" },
  { type: "text_delta", text: "Hel" },
  { type: "usage", usage: { inputTokens: 10, cachedInputTokens: 4 } },
  { type: "text_delta", text: "lo" },
  { type: "usage", usage: { outputTokens: 7, reasoningTokens: 2 } },
  { type: "finish", reason: "stop" },
];

Deno.test("ChatStreamEncoder renders a text stream without include_usage", () => {
  const out = run(TEXT, false);
  assert.deepEqual(dataFrames(out), [
    { ...HEAD, ...choice({ role: "assistant", content: "" }) },
    { ...HEAD, ...choice({ reasoning_content: "think" }) },
    { ...HEAD, ...choice({ content: "Hel" }) },
    { ...HEAD, ...choice({ content: "lo" }) },
    { ...HEAD, ...choice({}, "stop") },
    "[DONE]",
  ]);
  assert.ok(out.endsWith("data: [DONE]\n\n"));
});

Deno.test("ChatStreamEncoder adds usage:null and a final usage chunk with include_usage", () => {
  const frames = dataFrames(run(TEXT, true));
  assert.deepEqual(frames.slice(-3), [
    { ...HEAD, ...choice({}, "stop"), usage: null },
    {
      ...HEAD,
      choices: [],
      usage: {
        prompt_tokens: 10,
        completion_tokens: 7,
        total_tokens: 17,
        prompt_tokens_details: { cached_tokens: 4 },
        completion_tokens_details: { reasoning_tokens: 2 },
      },
    },
    "[DONE]",
  ]);
  for (const f of frames.slice(0, -2)) assert.equal((f as Record<string, unknown>).usage, null);
});

Deno.test("ChatStreamEncoder renders parallel tool calls with their own indexes", () => {
  const frames = dataFrames(run([
    { type: "start", id: "x", model: "y" },
    { type: "tool_call_start", index: 0, id: "call_a1", name: "get_weather" },
    { type: "tool_call_delta", index: 0, arguments: "" },
    { type: "tool_call_start", index: 1, id: "call_b2", name: "get_time" },
    { type: "tool_call_delta", index: 0, arguments: '{"city":"Paris"}' },
    { type: "finish", reason: "stop" },
  ], false));
  assert.deepEqual(frames.slice(1), [
    {
      ...HEAD,
      ...choice({
        tool_calls: [{
          index: 0,
          id: "call_a1",
          type: "function",
          function: { name: "get_weather", arguments: "" },
        }],
      }),
    },
    {
      ...HEAD,
      ...choice({
        tool_calls: [{
          index: 1,
          id: "call_b2",
          type: "function",
          function: { name: "get_time", arguments: "" },
        }],
      }),
    },
    { ...HEAD, ...choice({ tool_calls: [{ index: 0, function: { arguments: '{"city":"Paris"}' } }] }) },
    // the argument-less call is closed with "{}" (protocols §6 pitfall 7)
    { ...HEAD, ...choice({ tool_calls: [{ index: 1, function: { arguments: "{}" } }] }) },
    { ...HEAD, ...choice({}, "tool_calls") },
    "[DONE]",
  ]);
});

Deno.test("ChatStreamEncoder maps length and ignores events after finish", () => {
  const enc = createStreamEncoder(testCtx());
  enc.push({ type: "start", id: "x", model: "y" });
  const out = enc.push({ type: "finish", reason: "length" });
  assert.deepEqual(dataFrames(out), [{ ...HEAD, ...choice({}, "length") }, "[DONE]"]);
  assert.equal(enc.push({ type: "text_delta", text: "late" }), "");
  assert.equal(enc.error(errObj), "");
});

const errObj: ErrorObject = {
  message: "Поток ответа прервался из-за сбоя. [stream_service_error · req_test]",
  code: "stream_service_error",
  type: "api_error",
  param: null,
  action: "Повторите запрос.",
  request_id: "req_test",
};

Deno.test("ChatStreamEncoder error frame after content, and before anything else", () => {
  const enc = createStreamEncoder(testCtx());
  enc.push({ type: "start", id: "x", model: "y" });
  enc.push({ type: "text_delta", text: "par" });
  const expected = `data: ${JSON.stringify({ error: errObj, request_id: "req_test" })}\n\ndata: [DONE]\n\n`;
  assert.equal(enc.error(errObj), expected);
  assert.equal(enc.push({ type: "text_delta", text: "late" }), "");
  assert.equal(createStreamEncoder(testCtx()).error(errObj), expected);
});

Deno.test("ChatStreamEncoder emits nothing for an IR error event (engine calls error())", () => {
  const enc = createStreamEncoder(testCtx());
  assert.equal(enc.push({ type: "error", message: "boom" }), "");
});

Deno.test("ChatStreamEncoder: server tools are not shown; all citations go out in one annotations chunk before the finish", () => {
  const frames = dataFrames(run([
    { type: "start", id: "msg_1", model: "upstream-x" },
    { type: "text_delta", text: "Ищу. " },
    {
      type: "server_tool",
      id: "srvtoolu_1",
      name: "web_search",
      input: { query: "q" },
      result: { ok: true, sources: [{ url: "https://a", title: "A" }] },
    },
    { type: "reasoning_delta", text: "hm" },
    { type: "text_delta", text: "да 😀" },
    { type: "citations", textLength: 5, citations: [{ url: "https://a", title: "A", citedText: "c" }] },
    { type: "text_delta", text: " и " },
    { type: "text_delta", text: "нет" },
    { type: "citations", textLength: 3, citations: [{ url: "https://b" }] },
    { type: "finish", reason: "stop" },
  ], false));
  const cite = (start: number, end: number, url: string, title: string) => ({
    type: "url_citation",
    url_citation: { start_index: start, end_index: end, url, title },
  });
  assert.deepEqual(frames, [
    { ...HEAD, ...choice({ role: "assistant", content: "" }) },
    { ...HEAD, ...choice({ content: "Ищу. " }) },
    { ...HEAD, ...choice({ reasoning_content: "hm" }) },
    { ...HEAD, ...choice({ content: "да 😀" }) },
    { ...HEAD, ...choice({ content: " и " }) },
    { ...HEAD, ...choice({ content: "нет" }) },
    { ...HEAD, ...choice({ annotations: [cite(5, 10, "https://a", "A"), cite(13, 16, "https://b", "")] }) },
    { ...HEAD, ...choice({}, "stop") },
    "[DONE]",
  ]);
  assert.equal("Ищу. да 😀 и нет".slice(5, 10), "да 😀");
  assert.equal("Ищу. да 😀 и нет".slice(13, 16), "нет");
});
