/** The Responses stream encoder on beta's server tools: web_search_call items and url_citation annotations. */
import assert from "node:assert/strict";
import type { IREvent } from "../../ir/events.ts";
import { checkLifecycle, encode, parseSse, start, usage } from "./testing/helpers.ts";

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
