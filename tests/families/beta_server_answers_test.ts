/**
 * Family beta's provider-run tools in its answers, through a running gateway and the official SDKs (spec
 * §4.5 rules 7, 8, 10; §8.1 p.6; protocols §5.2, §5.3): on Messages the server-tool blocks pass through
 * natively; a Responses client sees `web_search_call` items and `url_citation` annotations; a Chat client
 * sees the text with `message.annotations`. Each search the provider bills costs 0.01; an unbilled search
 * error is free. The simulator plays the provider (sim/README.md: `search`, `fetch`, `search_error`,
 * `fetch_error`, `search_empty`, `cite_split`, `force_server_tools`).
 */
import assert from "node:assert/strict";
import { formatUsd, parseUsd } from "../../src/money/usd.ts";
import { ANTHROPIC_HEADERS, post, type TestGateway, withGateway } from "../support/harness.ts";
import { anthropicClient, openaiClient } from "../support/sdk_util.ts";
import { tokenCost, usageRows } from "../support/usage_rows.ts";

const MODEL = "beta-sonnet-5";
const CENT = parseUsd("0.01");
/** The simulator's query is the turn's text without directives: this prompt's words. */
const QUERY = "Новости дня";
const PROMPT = `${QUERY} [[sim:search=2]] [[sim:cite_split]] [[sim:words=6]]`;
/** Six words; cite_split leaves the first three uncited (19 UTF-16 units) and cites the rest. */
const TEXT = "Ответ симулятора на «Новости дня»: обработан";
const CITED_FROM = "Ответ симулятора на".length;
const HOSTED = [{ type: "web_search" as const }];

const source = (i: number) => `https://example.com/sim/search/${i}`;
const title = (i: number) => `Результат поиска ${i}: ${QUERY}`;

/** Responses url_citation annotations for the cited half of TEXT, one per search. */
const ANNOTATIONS = [1, 2].map((i) => ({
  type: "url_citation",
  start_index: CITED_FROM,
  end_index: TEXT.length,
  url: source(i),
  title: title(i),
}));

/** A web_search_call item for a search of QUERY (`sources`: undefined for a failed one). */
function searchItem(status: "completed" | "failed", sources?: string[]) {
  const action: Record<string, unknown> = { type: "search", query: QUERY, queries: [QUERY] };
  if (sources) action.sources = sources.map((url) => ({ type: "url", url }));
  return { type: "web_search_call", status, action };
}

function messageItem(text: string, annotations: unknown[] = []) {
  return {
    type: "message",
    status: "completed",
    content: [{ type: "output_text", annotations, logprobs: [], text }],
    role: "assistant",
  };
}

/**
 * Output items with their ids checked (prefix) and removed, and without the `parsed` field the SDK's stream
 * helper adds to each output_text.
 */
function withoutIds(output: any[]): any[] {
  return output.map(({ id, ...rest }) => {
    assert.match(id, rest.type === "message" ? /^msg_/ : /^ws_/);
    if (rest.type !== "message") return rest;
    return { ...rest, content: rest.content.map(({ parsed: _p, ...part }: any) => part) };
  });
}

async function usageRow(t: TestGateway, key: string, requestId: string | null | undefined) {
  const row = (await usageRows(t, key)).find((r) => r.request_id === requestId);
  assert.ok(row, `no usage row for ${requestId}`);
  return row;
}

/** The row reports `searches` provider-billed searches, charged 0.01 each on top of its tokens. */
function assertSearchCharge(row: Record<string, any>, searches: number, where: string) {
  assert.equal(row.web_search_requests, searches, where);
  assert.equal(row.web_search_fee_usd, formatUsd(BigInt(searches) * CENT), where);
  assert.equal(row.charged_usd, formatUsd(tokenCost(row) + BigInt(searches) * CENT), where);
  assert.equal(row.written_off_usd, "0.00", where);
}

async function balance(t: TestGateway, id: string): Promise<bigint> {
  return parseUsd((await t.admin("GET", `/admin/keys/${id}`)).json.balance_usd);
}

/** The SSE events of a raw stream, in order, with the sequence numbers checked gap-free from 0. */
async function rawResponsesEvents(stream: AsyncIterable<any>): Promise<any[]> {
  const events: any[] = [];
  for await (const e of stream) events.push(e);
  events.forEach((e, i) => assert.equal(e.sequence_number, i, `sequence_number of ${e.type}`));
  return events;
}

Deno.test("beta on Responses: searches as web_search_call items, citations as url_citation annotations, 0.01 a search", () =>
  withGateway(async (t) => {
    const k = await t.newKey("10.00");
    const client = openaiClient(t, k.key);
    const expected = [
      searchItem("completed", [source(1)]),
      searchItem("completed", [source(2)]),
      messageItem(TEXT, ANNOTATIONS),
    ];

    // JSON.
    const before = await balance(t, k.id);
    const { data: json, response } = await client.responses.create({
      model: MODEL,
      input: PROMPT,
      tools: HOSTED,
    })
      .withResponse();
    assert.equal(json.status, "completed");
    assert.deepEqual(withoutIds(json.output), expected);
    assert.equal(json.output_text, TEXT);
    assert.equal(TEXT.slice(CITED_FROM), " «Новости дня»: обработан");
    const row = await usageRow(t, k.key, response.headers.get("request-id"));
    assertSearchCharge(row, 2, "JSON");
    assert.equal(await balance(t, k.id), before - parseUsd(row.charged_usd));

    // Raw stream: every item's lifecycle, output indexes, gap-free sequence numbers.
    const events = await rawResponsesEvents(
      await client.responses.create({ model: MODEL, input: PROMPT, tools: HOSTED, stream: true }),
    );
    const lifecycle = (i: number) => [
      ["response.output_item.added", i],
      ["response.web_search_call.in_progress", i],
      ["response.web_search_call.searching", i],
      ["response.web_search_call.completed", i],
      ["response.output_item.done", i],
    ];
    assert.deepEqual(events.map((e) => [e.type, e.output_index]), [
      ["response.created", undefined],
      ["response.in_progress", undefined],
      ...lifecycle(0),
      ...lifecycle(1),
      ["response.output_item.added", 2],
      ["response.content_part.added", 2],
      ...Array.from({ length: 6 }, () => ["response.output_text.delta", 2]),
      ["response.output_text.annotation.added", 2],
      ["response.output_text.annotation.added", 2],
      ["response.output_text.done", 2],
      ["response.content_part.done", 2],
      ["response.output_item.done", 2],
      ["response.completed", undefined],
    ]);
    const ws = events[2].item.id;
    assert.deepEqual(events[2].item, {
      id: ws,
      type: "web_search_call",
      status: "in_progress",
      action: { type: "search", query: QUERY, queries: [QUERY] },
    });
    for (const e of events.slice(3, 6)) assert.equal(e.item_id, ws);
    const added = events.filter((e) => e.type === "response.output_text.annotation.added");
    assert.deepEqual(added.map((e) => [e.annotation_index, e.content_index, e.annotation]), [
      [0, 0, ANNOTATIONS[0]],
      [1, 0, ANNOTATIONS[1]],
    ]);
    assert.deepEqual(events.at(-3).part.annotations, ANNOTATIONS);
    assert.deepEqual(withoutIds(events.at(-1).response.output), expected);
    for (const e of events.filter((e) => e.type === "response.output_item.done")) {
      assert.deepEqual(e.item, events.at(-1).response.output[e.output_index]);
    }

    // The SDK's stream helper accepts the stream and accumulates the same response.
    const helper = client.responses.stream({ model: MODEL, input: PROMPT, tools: HOSTED });
    const seen: string[] = [];
    helper.on("event", (e) => seen.push(e.type));
    const final = await helper.finalResponse();
    assert.deepEqual(withoutIds(final.output), expected);
    assert.equal(final.output_text, TEXT);
    assert.ok(seen.includes("response.web_search_call.searching"));
    assert.ok(seen.includes("response.output_text.annotation.added"));

    // The next turn sends the output back as history: the web_search_call items are dropped (no upstream takes
    // them back), the annotated text stays as the assistant's turn.
    t.sim.requests.length = 0;
    const next = await client.responses.create({
      model: MODEL,
      tools: HOSTED,
      input: [
        { role: "user", content: PROMPT },
        ...json.output as any[],
        { role: "user", content: "Спасибо [[sim:words=2]]" },
      ],
    });
    assert.equal(next.status, "completed");
    const sent = t.sim.requests.at(-1)!.body as Record<string, any>;
    assert.deepEqual(sent.messages.map((m: any) => m.role), ["user", "assistant", "user"]);
    assert.deepEqual(sent.messages[1].content, [{ type: "text", text: TEXT }]);
    assert.equal((await t.admin("GET", `/admin/keys/${k.id}`)).json.held_usd, "0.00");
  }));

Deno.test("beta on Responses: a search error inside the 200 is a failed item (free when unbilled), an empty search completes with no sources", () =>
  withGateway(async (t) => {
    const k = await t.newKey("10.00");
    const client = openaiClient(t, k.key);
    const cases = [
      { directive: "[[sim:search_error=too_many_requests]]", item: searchItem("failed"), billed: 0 },
      { directive: "[[sim:search_error=max_uses_exceeded:billed]]", item: searchItem("failed"), billed: 1 },
      { directive: "[[sim:search_empty]]", item: searchItem("completed", []), billed: 1 },
    ];
    for (const c of cases) {
      const input = `${QUERY} [[sim:search=1]] [[sim:words=4]] ${c.directive}`;
      const { data: json, response } = await client.responses.create({ model: MODEL, input, tools: HOSTED })
        .withResponse();
      const output = withoutIds(json.output);
      assert.deepEqual(output.slice(0, 1), [c.item], c.directive);
      // No results, no citations.
      assert.equal(output[1].content[0].annotations.length, 0, c.directive);
      assert.equal(output[1].content[0].text.split(" ").length, 4, c.directive);
      assertSearchCharge(await usageRow(t, k.key, response.headers.get("request-id")), c.billed, c.directive);

      // Stream: a failed item has no .completed event (the API has no failed event), then its done.
      const events = await rawResponsesEvents(
        await client.responses.create({ model: MODEL, input, tools: HOSTED, stream: true }),
      );
      const types = events.filter((e) => e.output_index === 0).map((e) => e.type);
      assert.deepEqual(types, [
        "response.output_item.added",
        "response.web_search_call.in_progress",
        "response.web_search_call.searching",
        ...(c.item.status === "completed" ? ["response.web_search_call.completed"] : []),
        "response.output_item.done",
      ], c.directive);
      assert.deepEqual(withoutIds([events.find((e) => e.type === "response.output_item.done").item]), [
        c.item,
      ]);
      const final = await client.responses.stream({ model: MODEL, input, tools: HOSTED }).finalResponse();
      assert.deepEqual(withoutIds(final.output).slice(0, 1), [c.item], c.directive);
    }
  }));

Deno.test("beta on Responses: a provider's web fetch is a web_search_call with an open_page action", () =>
  withGateway(async (t) => {
    const k = await t.newKey("10.00");
    const client = openaiClient(t, k.key);
    // A Responses client cannot offer web fetch: the simulator is told to fetch anyway.
    const input =
      "Прочитай https://example.org/docs [[sim:fetch=1]] [[sim:words=3]] [[sim:force_server_tools]]";
    const json = await client.responses.create({ model: MODEL, input });
    const output = withoutIds(json.output);
    assert.deepEqual(output[0], {
      type: "web_search_call",
      status: "completed",
      action: { type: "open_page", url: "https://example.org/docs" },
    });
    assert.equal(output[1].type, "message");
    const failed = await client.responses.create({
      model: MODEL,
      input: `${input} [[sim:fetch_error=url_not_accessible]]`,
      stream: true,
    });
    const events = await rawResponsesEvents(failed);
    const done = events.find((e) => e.type === "response.output_item.done" && e.output_index === 0);
    assert.deepEqual(withoutIds([done.item]), [{
      type: "web_search_call",
      status: "failed",
      action: { type: "open_page", url: "https://example.org/docs" },
    }]);
    assert.ok(!events.some((e) => e.type === "response.web_search_call.completed"));
  }));

Deno.test("beta on Chat Completions: only the text, its citations as message.annotations (JSON, stream, SDK helper)", () =>
  withGateway(async (t) => {
    const k = await t.newKey("10.00");
    const client = openaiClient(t, k.key);
    // A Chat client cannot name a server tool: the simulator searches anyway (as a provider could).
    const messages = [{ role: "user" as const, content: `${PROMPT} [[sim:force_server_tools]]` }];
    const annotations = [1, 2].map((i) => ({
      type: "url_citation",
      url_citation: { start_index: CITED_FROM, end_index: TEXT.length, url: source(i), title: title(i) },
    }));

    const { data: json, response } = await client.chat.completions.create({ model: MODEL, messages })
      .withResponse();
    assert.deepEqual(json.choices[0]!.message, {
      role: "assistant",
      content: TEXT,
      refusal: null,
      annotations,
    });
    assert.equal(json.choices[0]!.finish_reason, "stop");
    assertSearchCharge(await usageRow(t, k.key, response.headers.get("request-id")), 2, "chat JSON");

    // Raw stream: the text, then one chunk with every annotation, then the finish.
    const stream = await client.chat.completions.create({ model: MODEL, messages, stream: true });
    const deltas: any[] = [];
    for await (const c of stream) deltas.push(c.choices[0]!.delta);
    assert.equal(deltas.map((d) => d.content ?? "").join(""), TEXT);
    assert.deepEqual(deltas.filter((d) => d.annotations), [{ annotations }]);
    assert.deepEqual(deltas.at(-2), { annotations });
    assert.ok(deltas.every((d) => !d.tool_calls));

    // The SDK's stream helper ends with the same message.
    const final = await client.chat.completions.stream({ model: MODEL, messages }).finalChatCompletion();
    assert.equal(final.choices[0]!.message.content, TEXT);
    assert.deepEqual(final.choices[0]!.message.annotations, annotations);
    assert.equal(final.choices[0]!.message.tool_calls, undefined);

    // A failed search leaves nothing on Chat: no annotations, and no fee when unbilled.
    const { data: failed, response: r2 } = await client.chat.completions.create({
      model: MODEL,
      messages: [{
        role: "user",
        content: `${QUERY} [[sim:search=1]] [[sim:force_server_tools]] [[sim:search_error=unavailable]]`,
      }],
    }).withResponse();
    assert.equal(failed.choices[0]!.message.annotations, undefined);
    assertSearchCharge(await usageRow(t, k.key, r2.headers.get("request-id")), 0, "chat failed search");
  }));

Deno.test("beta on Messages: server tool blocks pass through natively — order, error inside 200, empty list (SDK, JSON and stream)", () =>
  withGateway(async (t) => {
    const k = await t.newKey("10.00");
    const client = anthropicClient(t, k.key);
    const tools = [
      { type: "web_search_20250305" as const, name: "web_search" as const, max_uses: 5 },
      {
        type: "web_fetch_20250910" as const,
        name: "web_fetch" as const,
        max_uses: 3,
        max_content_tokens: 10_000,
      },
    ];
    const body = (text: string) => ({
      model: MODEL,
      max_tokens: 200,
      tools,
      messages: [{ role: "user" as const, content: text }],
    });
    const url = "https://example.org/a";
    const prompt = `${QUERY} ${url} [[sim:search=2]] [[sim:fetch=1]] [[sim:words=4]]`;

    const before = await balance(t, k.id);
    const { data: msg, response } = await client.messages.create(body(prompt)).withResponse();
    const types = msg.content.map((b) => b.type);
    assert.deepEqual(types, [
      "server_tool_use",
      "web_search_tool_result",
      "server_tool_use",
      "web_search_tool_result",
      "server_tool_use",
      "web_fetch_tool_result",
      "text",
    ]);
    const [use0, res0, , , fetchUse, fetchRes, text] = msg.content as any[];
    assert.match(use0.id, /^srvtoolu_/);
    assert.equal(res0.tool_use_id, use0.id);
    assert.deepEqual(use0.input, { query: `${QUERY} ${url}` });
    assert.deepEqual(fetchUse, {
      type: "server_tool_use",
      id: fetchUse.id,
      name: "web_fetch",
      input: { url },
    });
    assert.equal(fetchRes.tool_use_id, fetchUse.id);
    assert.equal(fetchRes.content.type, "web_fetch_result");
    assert.equal(fetchRes.content.url, url);
    assert.equal(text.citations.length, 2);
    assert.equal(text.citations[0].type, "web_search_result_location");
    assert.deepEqual(msg.usage.server_tool_use, { web_search_requests: 2, web_fetch_requests: 1 });
    const row = await usageRow(t, k.key, response.headers.get("request-id"));
    assertSearchCharge(row, 2, "messages");
    assert.equal(await balance(t, k.id), before - parseUsd(row.charged_usd));

    // Stream: the raw event order, and the SDK's accumulated message equals the JSON one (ids aside).
    const res = await post(
      t.url + "/v1/messages",
      k.key,
      { ...body(prompt), stream: true },
      ANTHROPIC_HEADERS,
    );
    const frames = (await res.text()).split("\n").filter((l) => l.startsWith("data: ")).map((l) =>
      JSON.parse(l.slice(6))
    );
    const starts = frames.filter((f) => f.type === "content_block_start");
    assert.deepEqual(starts.map((f) => [f.index, f.content_block.type]), types.map((type, i) => [i, type]));
    assert.deepEqual(starts.at(-1).content_block, { type: "text", text: "", citations: [] });
    assert.deepEqual(
      frames.filter((f) => f.type === "content_block_delta" && f.index === 6).map((f) => f.delta.type).slice(
        0,
        3,
      ),
      ["citations_delta", "citations_delta", "text_delta"],
    );
    const shape = (blocks: any[]) => blocks.map(({ id: _id, tool_use_id: _t, ...rest }) => rest);
    const streamed = await client.messages.stream(body(prompt)).finalMessage();
    assert.deepEqual(shape(streamed.content), shape(msg.content));

    // A tool error inside the 200 (unbilled: free), and an empty result list (billed).
    for (
      const [directive, content, billed] of [
        ["[[sim:search_error=too_many_requests]]", {
          type: "web_search_tool_result_error",
          error_code: "too_many_requests",
        }, 0],
        ["[[sim:search_empty]]", [], 1],
      ] as const
    ) {
      const text = `${QUERY} [[sim:search=1]] [[sim:words=3]] ${directive}`;
      const { data, response } = await client.messages.create(body(text)).withResponse();
      assert.deepEqual(data.content.map((b) => b.type), [
        "server_tool_use",
        "web_search_tool_result",
        "text",
      ]);
      assert.deepEqual((data.content[1] as any).content, content);
      assert.equal((data.content[2] as any).citations, undefined);
      assert.equal(data.usage.server_tool_use?.web_search_requests, billed);
      assertSearchCharge(await usageRow(t, k.key, response.headers.get("request-id")), billed, directive);
      const s = await client.messages.stream(body(text)).finalMessage();
      assert.deepEqual((s.content[1] as any).content, content, `${directive} stream`);
    }
    const fetchErr = await client.messages.create(
      body(`${url} [[sim:fetch=1]] [[sim:fetch_error=url_not_accessible]]`),
    );
    assert.deepEqual((fetchErr.content[1] as any).content, {
      type: "web_fetch_tool_result_error",
      error_code: "url_not_accessible",
    });
    assert.equal((await t.admin("GET", `/admin/keys/${k.id}`)).json.held_usd, "0.00");
  }));
