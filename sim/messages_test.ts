import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import { anthropicBody, payloads, post, readSse, TOOL_DEFS, withSim, wordCount } from "./test_util.ts";

const PATH = "/v1/messages";

/** Checks §2.7 emission rules and returns the payloads. */
function checkOrder(events: { event?: string; data: string }[]): any[] {
  const p = payloads(events);
  events.forEach((e, i) => assert.equal(e.event, p[i].type, "event: line equals JSON type"));
  assert.equal(p[0].type, "message_start");
  assert.equal(p.at(-1).type, "message_stop");
  assert.equal(p.at(-2).type, "message_delta");
  let open = -1;
  let next = 0;
  for (const e of p) {
    if (e.type === "content_block_start") {
      assert.equal(open, -1, "one block at a time");
      assert.equal(e.index, next++);
      open = e.index;
    } else if (e.type === "content_block_delta") assert.equal(e.index, open);
    else if (e.type === "content_block_stop") {
      assert.equal(e.index, open);
      open = -1;
    }
  }
  assert.equal(open, -1);
  return p;
}

Deno.test("messages: JSON answer and usage (cache reads excluded from input_tokens)", () =>
  withSim(async (sim) => {
    const res = await post(
      sim,
      PATH,
      anthropicBody("Привет, Claude [[sim:cached=3]]", { system: "Будь краток" }),
    );
    assert.equal(res.status, 200);
    assert.ok(res.headers.get("request-id"));
    const body = await res.json();
    assert.equal(body.type, "message");
    assert.equal(body.model, "claude-sim");
    assert.match(body.id, /^msg_/);
    assert.equal(body.stop_reason, "end_turn");
    assert.equal(body.content.length, 1);
    assert.equal(wordCount(body.content[0].text), 12);
    const prompt = Math.ceil(
      ("Будь краток".length + "user".length + "Привет, Claude [[sim:cached=3]]".length) / 4,
    );
    assert.equal(body.usage.input_tokens, prompt - 3);
    assert.equal(body.usage.cache_read_input_tokens, 3);
    assert.equal(body.usage.output_tokens, 12);
  }));

Deno.test("messages: stream follows the event grammar; usage in message_delta", () =>
  withSim(async (sim) => {
    const res = await post(
      sim,
      PATH,
      anthropicBody("привет [[sim:words=7]] [[sim:reasoning=2]]", { stream: true }),
    );
    assert.equal(res.headers.get("content-type"), "text/event-stream; charset=utf-8");
    const p = checkOrder(await readSse(res));
    const thinkingStart = p.find((e) => e.type === "content_block_start");
    assert.deepEqual(thinkingStart.content_block, { type: "thinking", thinking: "", signature: "" });
    const sig = p.find((e) => e.delta?.type === "signature_delta");
    assert.equal(sig.delta.signature, "sig_sim");
    const text = p.filter((e) => e.delta?.type === "text_delta").map((e) => e.delta.text).join("");
    assert.equal(wordCount(text), 7);
    const delta = p.at(-2);
    assert.equal(delta.delta.stop_reason, "end_turn");
    assert.equal(delta.usage.output_tokens, 9);
    assert.equal(delta.usage.output_tokens_details.thinking_tokens, 2);
  }));

Deno.test("messages: max_tokens truncation gives stop_reason max_tokens", () =>
  withSim(async (sim) => {
    const body = await (await post(sim, PATH, anthropicBody("привет [[sim:words=40]]", { max_tokens: 6 })))
      .json();
    assert.equal(body.stop_reason, "max_tokens");
    assert.equal(wordCount(body.content[0].text), 6);
    assert.equal(body.usage.output_tokens, 6);
  }));

Deno.test("messages: tool_use streamed via input_json_delta; tool_choice any/tool", () =>
  withSim(async (sim) => {
    const res = await post(
      sim,
      PATH,
      anthropicBody("ищи [[sim:tool]]", { stream: true, tools: TOOL_DEFS.anthropic }),
    );
    const p = checkOrder(await readSse(res));
    const start = p.find((e) => e.type === "content_block_start");
    assert.equal(start.content_block.type, "tool_use");
    assert.deepEqual(start.content_block.input, {});
    const frags = p.filter((e) => e.delta?.type === "input_json_delta").map((e) => e.delta.partial_json);
    assert.ok(frags.length >= 2 && frags.length <= 3);
    assert.deepEqual(JSON.parse(frags.join("")), { query: "ищи" });
    assert.equal(p.at(-2).delta.stop_reason, "tool_use");
    const forced = await (await post(
      sim,
      PATH,
      anthropicBody("x", {
        tools: [...TOOL_DEFS.anthropic, { name: "second", input_schema: { type: "object" } }],
        tool_choice: { type: "tool", name: "second" },
      }),
    )).json();
    assert.equal(forced.content[0].name, "second");
    const any = await (await post(
      sim,
      PATH,
      anthropicBody("x", { tools: TOOL_DEFS.anthropic, tool_choice: { type: "any" } }),
    ))
      .json();
    assert.equal(any.content[0].type, "tool_use");
    assert.equal(any.stop_reason, "tool_use");
  }));

Deno.test("messages: tool_result turn answers 'Результат инструмента получен'", () =>
  withSim(async (sim) => {
    const body = await (await post(sim, PATH, {
      model: "claude-sim",
      max_tokens: 100,
      tools: TOOL_DEFS.anthropic,
      messages: [
        { role: "user", content: "погода? [[sim:tool]]" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "lookup", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "18°C" }] },
      ],
    })).json();
    assert.equal(body.stop_reason, "end_turn");
    assert.ok(body.content[0].text.startsWith("Результат инструмента получен"));
  }));

Deno.test("messages: web_search server tool blocks and server_tool_use usage", () =>
  withSim(async (sim) => {
    const tools = [{ type: "web_search_20250305", name: "web_search", max_uses: 3 }];
    const res = await post(sim, PATH, anthropicBody("новости [[sim:search=2]]", { stream: true, tools }));
    const p = checkOrder(await readSse(res));
    const kinds = p.filter((e) => e.type === "content_block_start").map((e) => e.content_block.type);
    assert.deepEqual(kinds, [
      "server_tool_use",
      "web_search_tool_result",
      "server_tool_use",
      "web_search_tool_result",
      "text",
    ]);
    assert.deepEqual(p.at(-2).usage.server_tool_use, { web_search_requests: 2, web_fetch_requests: 0 });
    const json = await (await post(sim, PATH, anthropicBody("новости [[sim:search=1]]", { tools }))).json();
    assert.equal(json.content[1].type, "web_search_tool_result");
    assert.equal(json.content[1].tool_use_id, json.content[0].id);
    assert.equal(json.usage.server_tool_use.web_search_requests, 1);
  }));

Deno.test("messages: auth, invalid JSON and missing max_tokens errors", () =>
  withSim(async (sim) => {
    let res = await post(sim, PATH, anthropicBody("x"), { headers: {} });
    assert.equal(res.status, 401);
    assert.equal((await res.json()).error.type, "authentication_error");
    res = await post(sim, PATH, anthropicBody("x"), { headers: { authorization: "Bearer t" } });
    assert.equal(res.status, 200);
    await res.body?.cancel();
    res = await post(sim, PATH, "{nope");
    assert.equal(res.status, 400);
    const err = await res.json();
    assert.equal(err.type, "error");
    assert.equal(err.error.type, "invalid_request_error");
    res = await post(sim, PATH, { model: "m", messages: [] });
    assert.equal(res.status, 400);
    await res.body?.cancel();
  }));

Deno.test("messages: the official Anthropic SDK accumulates the stream", () =>
  withSim(async (sim) => {
    const client = new Anthropic({ apiKey: "sk-ant", baseURL: sim.url, maxRetries: 0 });
    const msg = await client.messages.stream({
      model: "claude-sim",
      max_tokens: 1000,
      messages: [{ role: "user", content: "Привет [[sim:words=20]] [[sim:reasoning]]" }],
    }).finalMessage();
    assert.equal(msg.content[0]!.type, "thinking");
    const text = msg.content[1]!;
    assert.equal(text.type === "text" && wordCount(text.text), 20);
    assert.equal(msg.usage.output_tokens, 28);
    const tool = await client.messages.stream({
      model: "claude-sim",
      max_tokens: 1000,
      tools: TOOL_DEFS.anthropic as any,
      messages: [{ role: "user", content: "q [[sim:tool]]" }],
    }).finalMessage();
    const block = tool.content[0]!;
    assert.ok(block.type === "tool_use" && (block.input as any).query === "q");
  }));

Deno.test("messages: refusal ends with stop_reason refusal and stop_details, JSON and stream; no tool call", () =>
  withSim(async (sim) => {
    const prompt = "взломай сервер [[sim:refusal]] [[sim:words=3]] [[sim:tool]]";
    const json = await (await post(sim, PATH, anthropicBody(prompt, { tools: TOOL_DEFS.anthropic }))).json();
    assert.equal(json.stop_reason, "refusal");
    assert.deepEqual(json.stop_details, {
      type: "refusal",
      category: "cyber",
      explanation: "Запрос похож на попытку вредоносной кибератаки.",
    });
    assert.deepEqual(json.content.map((b: any) => b.type), ["text"]);
    assert.equal(wordCount(json.content[0].text), 3);
    const p = checkOrder(await readSse(await post(sim, PATH, anthropicBody(prompt, { stream: true }))));
    assert.equal(p.at(-2).delta.stop_reason, "refusal");
    assert.equal(p.at(-2).delta.stop_details.category, "cyber");
    const none = await (await post(sim, PATH, anthropicBody("привет"))).json();
    assert.equal(none.stop_details, null);
  }));

const SEARCH_TOOL = { type: "web_search_20250305", name: "web_search", max_uses: 5 };
const FETCH_TOOL = { type: "web_fetch_20250910", name: "web_fetch", max_uses: 3 };

/** The content blocks of a stream, accumulated as a client does (input JSON parsed, citations pushed). */
function accumulate(p: any[]): any[] {
  const blocks: any[] = [];
  const json: string[] = [];
  for (const e of p) {
    if (e.type === "content_block_start") {
      blocks[e.index] = structuredClone(e.content_block);
      json[e.index] = "";
    } else if (e.type === "content_block_delta") {
      const b = blocks[e.index];
      if (e.delta.type === "text_delta") b.text += e.delta.text;
      else if (e.delta.type === "input_json_delta") json[e.index] += e.delta.partial_json;
      else if (e.delta.type === "citations_delta") b.citations.push(e.delta.citation);
    } else if (e.type === "content_block_stop" && json[e.index]) {
      blocks[e.index].input = JSON.parse(json[e.index]!);
    }
  }
  return blocks;
}

/** Blocks without their ids (fresh per request), tool_use_id replaced by whether it names the previous block. */
function shape(blocks: any[]): any[] {
  return blocks.map((b, i) => {
    const { id: _id, tool_use_id, ...rest } = b;
    return tool_use_id === undefined ? rest : { ...rest, pairs: tool_use_id === blocks[i - 1].id };
  });
}

Deno.test("messages: web_fetch server tool — URL from the turn, document result, web_fetch_requests", () =>
  withSim(async (sim) => {
    const prompt = "прочитай https://example.org/docs/page.html, пожалуйста [[sim:fetch=2]] [[sim:words=4]]";
    const json = await (await post(sim, PATH, anthropicBody(prompt, { tools: [FETCH_TOOL] }))).json();
    const url = "https://example.org/docs/page.html";
    const result = (i: number) => ({
      type: "web_fetch_tool_result",
      pairs: true,
      content: {
        type: "web_fetch_result",
        url,
        retrieved_at: "2025-01-01T00:00:00.000000+00:00",
        content: {
          type: "document",
          source: { type: "text", media_type: "text/plain", data: `Текст страницы ${url} (${i}).` },
          title: `Страница ${i}: ${url}`,
        },
      },
    });
    const use = { type: "server_tool_use", name: "web_fetch", input: { url } };
    assert.deepEqual(shape(json.content.slice(0, 4)), [use, result(1), use, result(2)]);
    assert.match(json.content[0].id, /^srvtoolu_/);
    assert.deepEqual(json.content[4].citations, undefined, "fetch results are not cited");
    assert.equal(wordCount(json.content[4].text), 4);
    assert.deepEqual(json.usage.server_tool_use, { web_search_requests: 0, web_fetch_requests: 2 });
    assert.equal(json.usage.output_tokens, 4);

    const p = checkOrder(
      await readSse(await post(sim, PATH, anthropicBody(prompt, { tools: [FETCH_TOOL], stream: true }))),
    );
    assert.deepEqual(shape(accumulate(p)), shape(json.content));
    assert.deepEqual(p.at(-2).usage.server_tool_use, { web_search_requests: 0, web_fetch_requests: 2 });
    // Without a URL in the turn the fixed page is opened; without the tool offered nothing is fetched.
    const fixed = await (await post(sim, PATH, anthropicBody("[[sim:fetch=1]]", { tools: [FETCH_TOOL] })))
      .json();
    assert.deepEqual(fixed.content[0].input, { url: "https://example.com/sim/page" });
    const none = await (await post(sim, PATH, anthropicBody("[[sim:fetch=1]]"))).json();
    assert.deepEqual(none.content.map((b: any) => b.type), ["text"]);
  }));

Deno.test("messages: search citations on the answer, JSON and stream (citations_delta); cite_split", () =>
  withSim(async (sim) => {
    const prompt = "новости [[sim:search=2]] [[sim:words=6]]";
    const json = await (await post(sim, PATH, anthropicBody(prompt, { tools: [SEARCH_TOOL] }))).json();
    const cite = (i: number) => ({
      type: "web_search_result_location",
      cited_text: `Фрагмент результата ${i}: новости`,
      url: `https://example.com/sim/search/${i}`,
      title: `Результат поиска ${i}: новости`,
      encrypted_index: `sim_encrypted_index_${i}`,
    });
    const text = json.content[4];
    assert.equal(text.type, "text");
    assert.equal(wordCount(text.text), 6);
    assert.deepEqual(text.citations, [cite(1), cite(2)]);
    assert.equal(json.content[1].content[0].url, cite(1).url);

    const p = checkOrder(
      await readSse(await post(sim, PATH, anthropicBody(prompt, { tools: [SEARCH_TOOL], stream: true }))),
    );
    const starts = p.filter((e) => e.type === "content_block_start");
    assert.deepEqual(starts.at(-1).content_block, { type: "text", text: "", citations: [] });
    const deltas = p.filter((e) => e.type === "content_block_delta" && e.index === 4).map((e) =>
      e.delta.type
    );
    assert.deepEqual(deltas.slice(0, 3), ["citations_delta", "citations_delta", "text_delta"]);
    assert.deepEqual(shape(accumulate(p)), shape(json.content));

    const split =
      await (await post(sim, PATH, anthropicBody(prompt + " [[sim:cite_split]]", { tools: [SEARCH_TOOL] })))
        .json();
    const [a, b] = split.content.slice(4);
    assert.equal(a.citations, undefined);
    assert.deepEqual(b.citations, [cite(1), cite(2)]);
    assert.equal(a.text + b.text, text.text);
    assert.equal(wordCount(a.text), 3);
    const sp = checkOrder(
      await readSse(
        await post(
          sim,
          PATH,
          anthropicBody(prompt + " [[sim:cite_split]]", { tools: [SEARCH_TOOL], stream: true }),
        ),
      ),
    );
    assert.deepEqual(shape(accumulate(sp)), shape(split.content));
    // The Anthropic SDK accumulates the same message.
    const client = new Anthropic({ apiKey: "sk-ant", baseURL: sim.url, maxRetries: 0 });
    const msg = await client.messages.stream(
      anthropicBody(prompt + " [[sim:cite_split]]", { tools: [SEARCH_TOOL] }) as any,
    ).finalMessage();
    assert.deepEqual(shape(msg.content as any[]), shape(split.content));
  }));

Deno.test("messages: search errors inside 200 (unbilled by default), empty results, fetch errors", () =>
  withSim(async (sim) => {
    const tools = [SEARCH_TOOL, FETCH_TOOL];
    const err = await (await post(
      sim,
      PATH,
      anthropicBody("q [[sim:search=2]] [[sim:search_error=too_many_requests]]", { tools }),
    )).json();
    assert.deepEqual(err.content.map((b: any) => b.type), [
      "server_tool_use",
      "web_search_tool_result",
      "server_tool_use",
      "web_search_tool_result",
      "text",
    ]);
    assert.deepEqual(err.content[1].content, {
      type: "web_search_tool_result_error",
      error_code: "too_many_requests",
    });
    assert.equal(err.content[4].citations, undefined);
    assert.deepEqual(err.usage.server_tool_use, { web_search_requests: 0, web_fetch_requests: 0 });
    const billed = await (await post(
      sim,
      PATH,
      anthropicBody("q [[sim:search=2]] [[sim:search_error=max_uses_exceeded:billed]]", {
        tools,
        stream: true,
      }),
    ));
    const p = checkOrder(await readSse(billed));
    assert.deepEqual(p.at(-2).usage.server_tool_use, { web_search_requests: 2, web_fetch_requests: 0 });
    assert.equal(accumulate(p)[1].content.error_code, "max_uses_exceeded");

    const empty =
      await (await post(sim, PATH, anthropicBody("q [[sim:search=1]] [[sim:search_empty]]", { tools })))
        .json();
    assert.deepEqual(empty.content[1].content, []);
    assert.equal(empty.content[2].citations, undefined);
    assert.equal(empty.usage.server_tool_use.web_search_requests, 1);

    const fetchErr = await (await post(
      sim,
      PATH,
      anthropicBody("q [[sim:fetch=1]] [[sim:fetch_error=url_not_accessible]]", { tools }),
    )).json();
    assert.deepEqual(fetchErr.content[1].content, {
      type: "web_fetch_tool_result_error",
      error_code: "url_not_accessible",
    });
    assert.deepEqual(fetchErr.usage.server_tool_use, { web_search_requests: 0, web_fetch_requests: 1 });
  }));

Deno.test("messages: force_server_tools emits search and fetch blocks with no server tool offered", () =>
  withSim(async (sim) => {
    const json = await (await post(
      sim,
      PATH,
      anthropicBody("q [[sim:search=1]] [[sim:fetch=1]] [[sim:force_server_tools]]"),
    )).json();
    assert.deepEqual(json.content.map((b: any) => b.type), [
      "server_tool_use",
      "web_search_tool_result",
      "server_tool_use",
      "web_fetch_tool_result",
      "text",
    ]);
    assert.equal(json.content[4].citations.length, 1);
  }));
