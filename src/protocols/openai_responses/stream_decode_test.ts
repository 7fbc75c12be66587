import assert from "node:assert/strict";
import type { IREvent } from "../../ir/events.ts";
import { replaySse } from "../sse_parse.ts";
import { createStreamDecoder } from "./stream_decode.ts";
import { cutSets, decodeFrames, fixture } from "./testing/helpers.ts";

async function replayEverySplit(name: string): Promise<IREvent[]> {
  const text = await fixture(name);
  const whole = decodeFrames(await replaySse(text));
  for (const cuts of cutSets(text)) {
    assert.deepEqual(
      decodeFrames(await replaySse(text, cuts)),
      whole,
      `${name} split at ${cuts.slice(0, 5)}`,
    );
  }
  return whole;
}

Deno.test("text fixture → start, text deltas, usage, finish stop (any byte split)", async () => {
  assert.deepEqual(await replayEverySplit("text.sse"), [
    { type: "start", id: "resp_phase_001", model: "gpt-5.3-codex" },
    { type: "text_delta", text: "The capital" },
    { type: "text_delta", text: " of France is Paris." },
    { type: "text_delta", text: " Привет — ✓" },
    {
      type: "usage",
      usage: { inputTokens: 50, cachedInputTokens: 10, outputTokens: 100, reasoningTokens: 20 },
    },
    { type: "finish", reason: "stop" },
  ]);
});

Deno.test("function call fixture → tool_call_start with call_id, deltas, finish tool_calls", async () => {
  assert.deepEqual(await replayEverySplit("function_call.sse"), [
    {
      type: "start",
      id: "resp_0775572d10a16b66006a8d85285ef487d2ae865d3657af7276",
      model: "gpt-5.1-2025-11-13",
    },
    { type: "tool_call_start", index: 0, id: "call_2FQdm3Br7Qb35YUBSkDR7kue", name: "get_weather" },
    { type: "tool_call_delta", index: 0, arguments: '{"' },
    { type: "tool_call_delta", index: 0, arguments: 'city":"Beijing"}' },
    {
      type: "usage",
      usage: {
        inputTokens: 45,
        cachedInputTokens: 0,
        cacheWriteTokens: 0,
        outputTokens: 25,
        reasoningTokens: 0,
      },
    },
    { type: "finish", reason: "tool_calls" },
  ]);
});

Deno.test("reasoning summary fixture → reasoning deltas (parts separated) then text", async () => {
  const events = await replayEverySplit("reasoning_summary.sse");
  const reasoning = events.flatMap((e) => e.type === "reasoning_delta" ? [e.text] : []).join("");
  assert.equal(reasoning, "**Calculating step-by-step**\n\nMultiply 12 by 13.\n\n**Checking** 156 is right.");
  assert.deepEqual(events.filter((e) => e.type === "text_delta"), [{
    type: "text_delta",
    text: "12 × 13 = 156.",
  }]);
  assert.deepEqual(events.at(-1), { type: "finish", reason: "stop" });
  assert.equal(events.filter((e) => e.type === "reasoning_signature").length, 0);
});

Deno.test("incomplete fixture → finish length with usage", async () => {
  const events = await replayEverySplit("incomplete.sse");
  assert.deepEqual(events.slice(-2), [
    { type: "usage", usage: { inputTokens: 20, cachedInputTokens: 0, outputTokens: 16, reasoningTokens: 0 } },
    { type: "finish", reason: "length" },
  ]);
});

Deno.test("error + response.failed fixture → one IR error from the nested form, nothing after", async () => {
  const events = await replayEverySplit("error_failed.sse");
  assert.deepEqual(events, [
    { type: "start", id: "resp_failed_01", model: "gpt-4o-mini-2024-07-18" },
    {
      type: "error",
      message: "You exceeded your current quota, please check your plan and billing details.",
      upstreamType: "insufficient_quota",
      upstreamCode: "insufficient_quota",
    },
  ]);
});

const ev = (data: Record<string, unknown>) => ({ event: String(data.type), data: JSON.stringify(data) });

Deno.test("flat error event and response.failed alone both become IR errors", () => {
  const d1 = createStreamDecoder();
  assert.deepEqual(d1.push(ev({ type: "error", code: "server_error", message: "boom", param: null })), [
    { type: "error", message: "boom", upstreamCode: "server_error" },
  ]);
  const d2 = createStreamDecoder();
  const failed = {
    type: "response.failed",
    response: { status: "failed", error: { code: "x", message: "bad" } },
  };
  assert.deepEqual(d2.push(ev(failed)), [{ type: "error", message: "bad", upstreamCode: "x" }]);
  assert.deepEqual(d2.end(), []);
});

Deno.test("stray [DONE], unknown events and a missing terminal are tolerated", () => {
  const d = createStreamDecoder();
  assert.deepEqual(d.push(ev({ type: "response.created", response: { id: "r", model: "m" } })), [
    { type: "start", id: "r", model: "m" },
  ]);
  assert.deepEqual(d.push(ev({ type: "response.web_search_call.searching", item_id: "ws" })), []);
  assert.deepEqual(d.push({ data: "[DONE]" }), []);
  assert.deepEqual(d.end(), []); // no terminal: the engine reports the failure
});

Deno.test("parallel function calls are indexed 0,1 by item_id; done-only arguments are caught up", () => {
  const d = createStreamDecoder();
  const out: IREvent[] = [];
  const push = (data: Record<string, unknown>) => out.push(...d.push(ev(data)));
  push({ type: "response.created", response: { id: "r", model: "m" } });
  for (const [i, id] of [[0, "fc_a"], [1, "fc_b"]] as const) {
    push({
      type: "response.output_item.added",
      output_index: i,
      item: { type: "function_call", id, call_id: `call_${i}`, name: `f${i}`, arguments: "" },
    });
  }
  push({ type: "response.function_call_arguments.delta", item_id: "fc_b", output_index: 1, delta: '{"b":' });
  push({
    type: "response.function_call_arguments.done",
    item_id: "fc_b",
    output_index: 1,
    arguments: '{"b":2}',
  });
  push({ type: "response.function_call_arguments.done", item_id: "fc_a", output_index: 0, arguments: "{}" });
  push({ type: "response.completed", response: { status: "completed", output: [] } });
  assert.deepEqual(out.slice(1), [
    { type: "tool_call_start", index: 0, id: "call_0", name: "f0" },
    { type: "tool_call_start", index: 1, id: "call_1", name: "f1" },
    { type: "tool_call_delta", index: 1, arguments: '{"b":' },
    { type: "tool_call_delta", index: 1, arguments: "2}" },
    { type: "tool_call_delta", index: 0, arguments: "{}" },
    { type: "finish", reason: "tool_calls" },
  ]);
});

Deno.test("a terminal-only stream yields its output as events; refusal maps to content_filter", () => {
  const d = createStreamDecoder();
  const res = {
    id: "r",
    model: "m",
    status: "completed",
    output: [{ type: "message", content: [{ type: "refusal", refusal: "I can't help with that." }] }],
  };
  assert.deepEqual(d.push(ev({ type: "response.completed", response: res })), [
    { type: "start", id: "r", model: "m" },
    { type: "text_delta", text: "I can't help with that." },
    { type: "finish", reason: "content_filter" },
  ]);
});

Deno.test("non-JSON data is an upstream protocol error", () => {
  assert.throws(() => createStreamDecoder().push({ data: "{oops" }), { name: "UpstreamProtocolError" });
});

Deno.test("frames without event: lines are decoded by their JSON type", async () => {
  const text = (await fixture("text.sse")).replace(/^event: .*\n/gm, "");
  const withEvents = decodeFrames(await replaySse(await fixture("text.sse")));
  assert.deepEqual(decodeFrames(await replaySse(text)), withEvents);
});
