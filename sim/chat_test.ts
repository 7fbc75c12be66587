import assert from "node:assert/strict";
import OpenAI from "openai";
import { CITED_URL } from "./chat.ts";
import { chatBody, payloads, post, readSse, TOOL_DEFS, withSim, wordCount } from "./test_util.ts";

const PATH = "/v1/chat/completions";

Deno.test("chat: JSON answer, model echo, usage", () =>
  withSim(async (sim) => {
    const res = await post(sim, PATH, chatBody("Расскажи про Deno [[sim:cached=2]]"));
    assert.equal(res.status, 200);
    assert.ok(res.headers.get("x-request-id"));
    const body = await res.json();
    assert.equal(body.object, "chat.completion");
    assert.equal(body.model, "gpt-sim");
    assert.match(body.id, /^chatcmpl-/);
    const msg = body.choices[0].message;
    assert.equal(msg.role, "assistant");
    assert.ok(msg.content.startsWith("Ответ симулятора на «Расскажи про Deno»:"));
    assert.equal(wordCount(msg.content), 12);
    assert.equal(body.choices[0].finish_reason, "stop");
    assert.equal(body.usage.completion_tokens, 12);
    // prompt = ceil(chars of all string values / 4): "user" + the content
    assert.equal(
      body.usage.prompt_tokens,
      Math.ceil(("user".length + "Расскажи про Deno [[sim:cached=2]]".length) / 4),
    );
    assert.equal(body.usage.total_tokens, body.usage.prompt_tokens + 12);
    assert.equal(body.usage.prompt_tokens_details.cached_tokens, 2);
    assert.equal(body.usage.completion_tokens_details.reasoning_tokens, 0);
  }));

Deno.test("chat: stream without include_usage has no usage at all", () =>
  withSim(async (sim) => {
    const res = await post(sim, PATH, chatBody("привет [[sim:words=5]]", { stream: true }));
    assert.equal(res.headers.get("content-type"), "text/event-stream; charset=utf-8");
    const events = await readSse(res);
    assert.equal(events.at(-1)!.data, "[DONE]");
    assert.ok(events.every((e) => e.event === undefined));
    const chunks = payloads(events);
    assert.ok(chunks.every((c) => !("usage" in c)));
    assert.equal(chunks[0].choices[0].delta.role, "assistant");
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
    assert.equal(wordCount(text), 5);
    assert.equal(chunks.at(-1).choices[0].finish_reason, "stop");
    assert.equal(new Set(chunks.map((c) => c.id)).size, 1);
  }));

Deno.test("chat: stream with include_usage ends with a choices:[] usage chunk", () =>
  withSim(async (sim) => {
    const res = await post(
      sim,
      PATH,
      chatBody("привет [[sim:reasoning=4]] [[sim:search=3]]", {
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    const chunks = payloads(await readSse(res));
    const last = chunks.at(-1);
    assert.deepEqual(last.choices, []);
    assert.equal(last.usage.completion_tokens, 16);
    assert.equal(last.usage.completion_tokens_details.reasoning_tokens, 4);
    assert.deepEqual(last.usage.server_tool_use, { web_search_requests: 3 });
    assert.ok(chunks.slice(0, -1).every((c) => c.usage === null));
    const reasoning = chunks.map((c) => c.choices[0]?.delta.reasoning_content ?? "").join("");
    assert.equal(wordCount(reasoning), 4);
  }));

Deno.test("chat: url_citation cites a page over the whole answer, in JSON and in a stream delta", () =>
  withSim(async (sim) => {
    const body = await (await post(sim, PATH, chatBody("найди [[sim:url_citation]] [[sim:words=4]]"))).json();
    const msg = body.choices[0].message;
    assert.deepEqual(msg.annotations, [{
      type: "url_citation",
      url_citation: {
        start_index: 0,
        end_index: msg.content.length,
        url: CITED_URL,
        title: "Страница симулятора",
      },
    }]);
    assert.equal(body.usage.server_tool_use, undefined, "the citation is the only sign of the search");
    const plain = await (await post(sim, PATH, chatBody("найди"))).json();
    assert.deepEqual(plain.choices[0].message.annotations, []);
    const chunks = payloads(
      await readSse(await post(sim, PATH, chatBody("найди [[sim:url_citation]]", { stream: true }))),
    );
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
    const cited = chunks.filter((c) => c.choices[0]?.delta.annotations);
    assert.equal(cited.length, 1);
    assert.equal(cited[0].choices[0].delta.annotations[0].url_citation.end_index, text.length);
    assert.equal(chunks.at(-1).choices[0].finish_reason, "stop", "the citation comes before the finish");
  }));

Deno.test("chat: prompt_tokens=N reports N prompt tokens", () =>
  withSim(async (sim) => {
    const body = await (await post(sim, PATH, chatBody("привет [[sim:prompt_tokens=256001]]"))).json();
    assert.equal(body.usage.prompt_tokens, 256_001);
    assert.equal(body.usage.total_tokens, 256_001 + 12);
  }));

Deno.test("chat: max_completion_tokens truncates with finish_reason length", () =>
  withSim(async (sim) => {
    const body = await (await post(sim, PATH, chatBody("привет", { max_completion_tokens: 4 }))).json();
    assert.equal(body.choices[0].finish_reason, "length");
    assert.equal(wordCount(body.choices[0].message.content), 4);
    assert.equal(body.usage.completion_tokens, 4);
    const legacy = await (await post(sim, PATH, chatBody("привет [[sim:words=50]]", { max_tokens: 20 })))
      .json();
    assert.equal(legacy.usage.completion_tokens, 20);
    assert.equal(legacy.choices[0].finish_reason, "length");
  }));

Deno.test("chat: tool call streamed in fragments, finish_reason tool_calls", () =>
  withSim(async (sim) => {
    const res = await post(
      sim,
      PATH,
      chatBody("найди погоду [[sim:tool]]", { stream: true, tools: TOOL_DEFS.chat }),
    );
    const chunks = payloads(await readSse(res));
    const frags = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    assert.equal(frags[0].id.startsWith("call_"), true);
    assert.equal(frags[0].function.name, "lookup");
    const args = frags.map((f: any) => f.function.arguments ?? "").join("");
    assert.deepEqual(JSON.parse(args), { query: "найди погоду" });
    assert.ok(frags.length >= 3);
    assert.equal(chunks.at(-1).choices[0].finish_reason, "tool_calls");
  }));

Deno.test("chat: tool_choice required / forced / none; tool result answer", () =>
  withSim(async (sim) => {
    const two = [...TOOL_DEFS.chat, { type: "function", function: { name: "other" } }];
    let body = await (await post(sim, PATH, chatBody("x", { tools: two, tool_choice: "required" }))).json();
    assert.equal(body.choices[0].message.tool_calls[0].function.name, "lookup");
    assert.equal(body.choices[0].message.content, null);
    assert.equal(body.usage.completion_tokens, 3);
    body = await (await post(
      sim,
      PATH,
      chatBody("x", {
        tools: two,
        tool_choice: { type: "function", function: { name: "other" } },
      }),
    )).json();
    assert.equal(body.choices[0].message.tool_calls[0].function.name, "other");
    body = await (await post(sim, PATH, chatBody("x [[sim:tool]]", { tools: two, tool_choice: "none" })))
      .json();
    assert.equal(body.choices[0].message.tool_calls, undefined);
    body = await (await post(sim, PATH, {
      model: "m",
      messages: [
        { role: "user", content: "погода?" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "call_1", content: "18°C, ясно" },
      ],
      tools: two,
    })).json();
    assert.ok(body.choices[0].message.content.startsWith("Результат инструмента получен"));
    assert.equal(body.choices[0].finish_reason, "stop");
  }));

Deno.test("chat: the official openai SDK accumulates the stream", () =>
  withSim(async (sim) => {
    const client = new OpenAI({ apiKey: "sk-test", baseURL: sim.url + "/v1", maxRetries: 0 });
    const stream = client.chat.completions.stream({
      model: "gpt-sim",
      messages: [{ role: "user", content: "Как дела? [[sim:words=30]]" }],
      stream_options: { include_usage: true },
    });
    const done = await stream.finalChatCompletion();
    assert.equal(wordCount(done.choices[0]!.message.content!), 30);
    assert.equal(done.usage?.completion_tokens, 30);
    const tool = await client.chat.completions.create({
      model: "gpt-sim",
      messages: [{ role: "user", content: "q [[sim:tool]]" }],
      tools: TOOL_DEFS.chat as any,
    });
    assert.equal(tool.choices[0]!.finish_reason, "tool_calls");
  }));
