/** How a Chat upstream reports a web search (url_citation.ts): the usage count, or a cited page. */
import assert from "node:assert/strict";
import type { IREvent } from "../../ir/events.ts";
import { decodeResponse } from "./response_decode.ts";
import { ChatStreamDecoder } from "./stream_decode.ts";
import { fullChatUsage } from "./usage.ts";

const CITATION = {
  type: "url_citation",
  url_citation: { start_index: 0, end_index: 5, url: "https://example.com/", title: "Пример" },
};
const usage = (extra: Record<string, unknown> = {}) => ({
  prompt_tokens: 10,
  completion_tokens: 5,
  ...extra,
});

function completion(message: Record<string, unknown>, u: Record<string, unknown> | undefined) {
  return {
    id: "chatcmpl-1",
    model: "m",
    choices: [{
      index: 0,
      message: { role: "assistant", content: "Ответ", ...message },
      finish_reason: "stop",
    }],
    ...(u ? { usage: u } : {}),
  };
}

Deno.test("usage.server_tool_use.web_search_requests is the search count; other shapes count as none", () => {
  assert.equal(fullChatUsage(usage({ server_tool_use: { web_search_requests: 2 } })).webSearchRequests, 2);
  assert.equal(fullChatUsage(usage()).webSearchRequests, 0);
  assert.equal(fullChatUsage(usage({ server_tool_use: { web_search_requests: "2" } })).webSearchRequests, 0);
  assert.equal(fullChatUsage(usage({ server_tool_use: 7 })).webSearchRequests, 0);
  assert.equal(
    fullChatUsage(usage({ web_search_requests: 3 })).webSearchRequests,
    0,
    "only the documented place",
  );
});

Deno.test("a JSON answer with a url_citation annotation searched at least once", () => {
  const searches = (message: Record<string, unknown>, u = usage()) =>
    decodeResponse(completion(message, u)).usage?.webSearchRequests;
  assert.equal(searches({ annotations: [CITATION] }), 1);
  assert.equal(
    searches({ annotations: [CITATION] }, usage({ server_tool_use: { web_search_requests: 3 } })),
    3,
  );
  assert.equal(searches({ annotations: [] }), 0);
  assert.equal(searches({ annotations: [{ type: "file_citation" }] }), 0);
  assert.equal(
    searches({ annotations: "url_citation" }),
    0,
    "a malformed list is no citation, and no refusal",
  );
  assert.equal(decodeResponse(completion({ annotations: [CITATION] }, undefined)).usage, undefined);
});

function decodeChunks(chunks: Record<string, unknown>[]): IREvent[] {
  const d = new ChatStreamDecoder();
  const out: IREvent[] = [];
  for (const c of chunks) out.push(...d.pushChunk({ id: "chatcmpl-1", model: "m", ...c }));
  return [...out, ...d.pushDone()];
}
const delta = (d: Record<string, unknown>, finish: string | null = null) => ({
  choices: [{ index: 0, delta: d, finish_reason: finish }],
});
const usageEvents = (events: IREvent[]) => events.filter((e) => e.type === "usage").map((e) => e.usage);

Deno.test("a stream's citation raises the search count on the usage that follows it", () => {
  const events = decodeChunks([
    delta({ content: "Ответ" }),
    delta({ annotations: [CITATION] }),
    delta({}, "stop"),
    { choices: [], usage: usage() },
  ]);
  assert.deepEqual(usageEvents(events), [{ inputTokens: 10, outputTokens: 5, webSearchRequests: 1 }]);
  const counted = decodeChunks([
    delta({ content: "Ответ", annotations: [CITATION] }, "stop"),
    { choices: [], usage: usage({ server_tool_use: { web_search_requests: 2 } }) },
  ]);
  assert.deepEqual(usageEvents(counted), [{ inputTokens: 10, outputTokens: 5, webSearchRequests: 2 }]);
});

Deno.test("a stream's citation after its usage is its own usage event; without one the count stands", () => {
  const late = decodeChunks([
    delta({ content: "Ответ" }, "stop"),
    { choices: [], usage: usage() },
    delta({ annotations: [CITATION] }),
  ]);
  assert.deepEqual(usageEvents(late), [{ inputTokens: 10, outputTokens: 5 }, { webSearchRequests: 1 }]);
  const plain = decodeChunks([
    delta({ content: "Ответ", annotations: [{ type: "other" }] }, "stop"),
    { choices: [], usage: usage({ server_tool_use: { web_search_requests: 0 } }) },
  ]);
  assert.deepEqual(usageEvents(plain), [{ inputTokens: 10, outputTokens: 5, webSearchRequests: 0 }]);
  const noUsage = decodeChunks([delta({ content: "Ответ", annotations: [CITATION] }, "stop")]);
  assert.deepEqual(usageEvents(noUsage), [], "no usage is invented: the answer is then estimated");
});
