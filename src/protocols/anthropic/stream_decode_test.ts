import assert from "node:assert/strict";
import type { IREvent } from "../../ir/events.ts";
import { replaySse } from "../sse_parse.ts";
import { createStreamDecoder } from "./stream_decode.ts";
import { decodeFrames, fixture } from "./testing/helpers.ts";

const FIXTURES = [
  "text.sse",
  "tool_use.sse",
  "thinking.sse",
  "web_search.sse",
  "web_search_cited.sse",
  "web_fetch_errors.sse",
  "error.sse",
  "max_tokens.sse",
];

async function decodeFixture(name: string, cuts: number[] = []): Promise<IREvent[]> {
  return decodeFrames(await replaySse(fixture(name), cuts));
}

Deno.test("AnthropicStreamDecoder gives the same events whatever the byte cuts", async () => {
  for (const name of FIXTURES) {
    const whole = await decodeFixture(name);
    const len = new TextEncoder().encode(fixture(name)).length;
    for (const cuts of [[1], [7, 8, 9], [len >> 1], [len - 1], [13, 101, 257, 600, 1024, 1500]]) {
      assert.deepEqual(await decodeFixture(name, cuts), whole, `${name} cut at ${cuts}`);
    }
    for (let cut = 1; cut < len; cut += 17) {
      assert.deepEqual(await decodeFixture(name, [cut]), whole, `${name} cut at ${cut}`);
    }
  }
});

Deno.test("AnthropicStreamDecoder decodes the text recording", async () => {
  assert.deepEqual(await decodeFixture("text.sse"), [
    { type: "start", id: "msg_01QC4g3HwBThD4BaNtBckFDJ", model: "claude-sonnet-4-5-20250929" },
    {
      type: "usage",
      usage: { inputTokens: 12, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 1 },
    },
    { type: "text_delta", text: "Hello" },
    { type: "text_delta", text: "! How can I help?" },
    {
      type: "usage",
      usage: { inputTokens: 12, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 30 },
    },
    { type: "finish", reason: "stop" },
  ]);
});

Deno.test("AnthropicStreamDecoder numbers tool calls among tool_use blocks and skips the placeholder input", async () => {
  const events = await decodeFixture("tool_use.sse");
  assert.deepEqual(events.slice(2), [
    { type: "text_delta", text: "Okay, let me check the weather for San Francisco, CA:" },
    { type: "tool_call_start", index: 0, id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", name: "get_weather" },
    { type: "tool_call_delta", index: 0, arguments: '{"location": "San Fra' },
    { type: "tool_call_delta", index: 0, arguments: 'ncisco, CA"}' },
    {
      type: "usage",
      usage: { inputTokens: 472, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 89 },
    },
    { type: "finish", reason: "tool_calls" },
  ]);
});

Deno.test("AnthropicStreamDecoder decodes thinking with its signature and thinking tokens", async () => {
  const events = await decodeFixture("thinking.sse");
  assert.deepEqual(events.slice(2), [
    { type: "reasoning_delta", text: "I'm working through the Euclidean algorithm" },
    { type: "reasoning_signature", signature: "EsECCokBCBAYAipA9i3H…" },
    { type: "text_delta", text: "The greatest common divisor of 1071 and 462 is 21." },
    {
      type: "usage",
      usage: {
        inputTokens: 47,
        cachedInputTokens: 0,
        cacheWriteTokens: 0,
        outputTokens: 373,
        reasoningTokens: 62,
      },
    },
    { type: "finish", reason: "stop" },
  ]);
});

Deno.test("AnthropicStreamDecoder reads a server tool and a citation, and takes the larger final input count", async () => {
  const events = await decodeFixture("web_search.sse");
  assert.deepEqual(events.slice(2), [
    {
      type: "server_tool",
      id: "srvtoolu_01Bj5uzzLcYG5hfueSLcDH8k",
      name: "web_search",
      input: { query: "tech news today" },
      result: { ok: true, sources: [{ url: "https://…", title: "…" }] },
    },
    { type: "text_delta", text: "With iOS 26 officially launched, …" },
    {
      type: "citations",
      textLength: "With iOS 26 officially launched, …".length,
      citations: [{
        url: "https://9to5mac.com/…",
        title: "…",
        citedText: "With iOS 26 officially launched…",
      }],
    },
    {
      type: "usage",
      usage: {
        inputTokens: 15665,
        cachedInputTokens: 0,
        cacheWriteTokens: 0,
        outputTokens: 795,
        webSearchRequests: 1,
      },
    },
    { type: "finish", reason: "stop" },
  ]);
});

Deno.test("AnthropicStreamDecoder turns an error event into an IR error and stops", async () => {
  const events = await decodeFixture("error.sse");
  assert.deepEqual(events.slice(-2), [
    { type: "text_delta", text: "Hello" },
    { type: "error", upstreamType: "overloaded_error", message: "Overloaded" },
  ]);
  assert.ok(!events.some((e) => e.type === "finish"));
});

Deno.test("AnthropicStreamDecoder adds cache reads and writes into the input count", async () => {
  const events = await decodeFixture("max_tokens.sse");
  assert.deepEqual(events.filter((e) => e.type === "usage").at(-1), {
    type: "usage",
    usage: { inputTokens: 2005, cachedInputTokens: 1800, cacheWriteTokens: 200, outputTokens: 4 },
  });
  assert.deepEqual(events.at(-1), { type: "finish", reason: "length" });
});

Deno.test("AnthropicStreamDecoder returns nothing at end() when message_stop never came", () => {
  const d = createStreamDecoder();
  d.push({ event: "message_start", data: '{"type":"message_start","message":{"id":"m","model":"x"}}' });
  assert.deepEqual(d.end(), []);
});

Deno.test("AnthropicStreamDecoder ignores ping, unknown events and frames after message_stop", () => {
  const d = createStreamDecoder();
  assert.equal(d.push({ event: "message_start", data: '{"type":"message_start","message":{}}' }).length, 1);
  assert.deepEqual(d.push({ event: "ping", data: '{"type":"ping"}' }), []);
  assert.deepEqual(d.push({ event: "future_event", data: '{"type":"future_event","x":1}' }), []);
  assert.deepEqual(d.push({ data: '{"type":"message_stop"}' }), [{ type: "finish", reason: "stop" }]);
  assert.deepEqual(d.push({ data: '{"type":"message_stop"}' }), []);
});

Deno.test("AnthropicStreamDecoder reports the matched stop sequence", () => {
  const d = createStreamDecoder();
  d.push({ data: '{"type":"message_start","message":{"id":"m","model":"x"}}' });
  d.push({ data: '{"type":"message_delta","delta":{"stop_reason":"stop_sequence","stop_sequence":"END"}}' });
  assert.deepEqual(d.push({ data: '{"type":"message_stop"}' }), [
    { type: "finish", reason: "stop_sequence", stopSequence: "END" },
  ]);
});

Deno.test("AnthropicStreamDecoder replays content pre-populated in message_start", () => {
  const d = createStreamDecoder();
  const start = {
    type: "message_start",
    message: {
      id: "m",
      model: "x",
      content: [
        { type: "text", text: "Done." },
        { type: "tool_use", id: "toolu_1", name: "f", input: { a: 1 } },
      ],
    },
  };
  assert.deepEqual(d.push({ data: JSON.stringify(start) }), [
    { type: "start", id: "m", model: "x" },
    { type: "text_delta", text: "Done." },
    { type: "tool_call_start", index: 0, id: "toolu_1", name: "f" },
    { type: "tool_call_delta", index: 0, arguments: '{"a":1}' },
  ]);
});

Deno.test("AnthropicStreamDecoder: citations close their own text block, with its UTF-16 length", async () => {
  const events = await decodeFixture("web_search_cited.sse");
  assert.deepEqual(events.slice(2, -2), [
    {
      type: "server_tool",
      id: "srvtoolu_01Cited",
      name: "web_search",
      input: { query: "ios 26" },
      result: {
        ok: true,
        sources: [{ url: "https://9to5mac.com/ios-26", title: "iOS 26 is out" }, {
          url: "https://example.ru/ios",
          title: "Апдейт",
        }],
      },
    },
    { type: "text_delta", text: "Вот что " },
    { type: "text_delta", text: "нашлось: " },
    { type: "text_delta", text: "iOS 26 вышла 😀" },
    { type: "text_delta", text: " сегодня" },
    {
      type: "citations",
      textLength: "iOS 26 вышла 😀 сегодня".length, // 23: the emoji is two UTF-16 units
      citations: [
        {
          url: "https://9to5mac.com/ios-26",
          title: "iOS 26 is out",
          citedText: "With iOS 26 officially launched…",
        },
        { url: "https://example.ru/ios", citedText: "Апдейт доступен…" },
      ],
    },
    { type: "text_delta", text: "." },
  ]);
  assert.equal("iOS 26 вышла 😀 сегодня".length, 23);
});

Deno.test("AnthropicStreamDecoder: tool errors inside the 200, an empty search, a fetch; uncited text has no event", async () => {
  const events = await decodeFixture("web_fetch_errors.sse");
  assert.deepEqual(events.slice(2), [
    { type: "text_delta", text: "I'll search and fetch." },
    {
      type: "server_tool",
      id: "srvtoolu_01SearchErr",
      name: "web_search",
      input: { query: "deno 2" },
      result: { ok: false, errorCode: "too_many_requests" },
    },
    {
      type: "server_tool",
      id: "srvtoolu_01SearchEmpty",
      name: "web_search",
      input: { query: "zzqx" },
      result: { ok: true, sources: [] },
    },
    {
      type: "server_tool",
      id: "srvtoolu_01Fetch",
      name: "web_fetch",
      input: { url: "https://en.wikipedia.org/wiki/Maglemosian_culture" },
      result: {
        ok: true,
        sources: [{ url: "https://en.wikipedia.org/wiki/Maglemosian_culture", title: "Maglemosian culture" }],
      },
    },
    {
      type: "server_tool",
      id: "srvtoolu_01FetchErr",
      name: "web_fetch",
      input: { url: "https://example.com/private" },
      result: { ok: false, errorCode: "url_not_accessible" },
    },
    { type: "text_delta", text: "The page says little." },
    {
      type: "usage",
      usage: {
        inputTokens: 6120,
        cachedInputTokens: 0,
        cacheWriteTokens: 0,
        outputTokens: 180,
        webSearchRequests: 1,
      },
    },
    { type: "finish", reason: "stop" },
  ]);
});

Deno.test("AnthropicStreamDecoder: server blocks and a cited text pre-populated in message_start", () => {
  const events = decodeFrames([{
    event: "message_start",
    data: JSON.stringify({
      type: "message_start",
      message: {
        id: "msg_1",
        model: "m",
        content: [
          { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "q" } },
          {
            type: "web_search_tool_result",
            tool_use_id: "srvtoolu_1",
            content: [{ url: "https://a", title: "A" }],
          },
          {
            type: "text",
            text: "Да.",
            citations: [{
              type: "web_search_result_location",
              url: "https://a",
              title: "A",
              cited_text: "c",
            }],
          },
        ],
      },
    }),
  }, { event: "message_stop", data: '{"type":"message_stop"}' }]);
  assert.deepEqual(events, [
    { type: "start", id: "msg_1", model: "m" },
    {
      type: "server_tool",
      id: "srvtoolu_1",
      name: "web_search",
      input: { query: "q" },
      result: { ok: true, sources: [{ url: "https://a", title: "A" }] },
    },
    { type: "text_delta", text: "Да." },
    { type: "citations", textLength: 3, citations: [{ url: "https://a", title: "A", citedText: "c" }] },
    { type: "finish", reason: "stop" },
  ]);
});
