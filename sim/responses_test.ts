import assert from "node:assert/strict";
import OpenAI from "openai";
import { payloads, post, readSse, responsesBody, TOOL_DEFS, withSim, wordCount } from "./test_util.ts";

const PATH = "/v1/responses";

/** Checks §4.7 framing and returns the payloads. */
function checkLifecycle(events: { event?: string; data: string }[], terminal: string): any[] {
  const p = payloads(events);
  assert.equal(p.length, events.length, "no [DONE]");
  events.forEach((e, i) => assert.equal(e.event, p[i].type));
  p.forEach((e, i) => assert.equal(e.sequence_number, i));
  assert.equal(p[0].type, "response.created");
  assert.equal(p[0].response.status, "in_progress");
  assert.equal(p[1].type, "response.in_progress");
  assert.equal(p.at(-1).type, terminal);
  return p;
}

Deno.test("responses: JSON answer and usage", () =>
  withSim(async (sim) => {
    const res = await post(
      sim,
      PATH,
      responsesBody("Привет, мир [[sim:cached=1]]", { instructions: "Кратко" }),
    );
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.object, "response");
    assert.equal(body.status, "completed");
    assert.equal(body.model, "gpt-resp-sim");
    assert.equal(body.instructions, "Кратко");
    const msg = body.output[0];
    assert.equal(msg.type, "message");
    assert.equal(msg.status, "completed");
    assert.equal(wordCount(msg.content[0].text), 12);
    const prompt = Math.ceil(("Кратко".length + "Привет, мир [[sim:cached=1]]".length) / 4);
    assert.deepEqual(body.usage, {
      input_tokens: prompt,
      input_tokens_details: { cached_tokens: 1 },
      output_tokens: 12,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: prompt + 12,
    });
  }));

Deno.test("responses: streamed text lifecycle with sequence numbers", () =>
  withSim(async (sim) => {
    const res = await post(sim, PATH, responsesBody("привет [[sim:words=6]]", { stream: true }));
    const p = checkLifecycle(await readSse(res), "response.completed");
    const types = p.map((e) => e.type).filter((t) => t !== "response.output_text.delta");
    assert.deepEqual(types, [
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const text = p.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta).join("");
    assert.equal(wordCount(text), 6);
    assert.equal(p.find((e) => e.type === "response.output_text.done").text, text);
    assert.equal(p.at(-1).response.usage.output_tokens, 6);
    assert.equal(p.at(-1).response.output[0].content[0].text, text);
  }));

Deno.test("responses: reasoning item then message; reasoning_tokens", () =>
  withSim(async (sim) => {
    const res = await post(sim, PATH, responsesBody("думай [[sim:reasoning=3]]", { stream: true }));
    const p = checkLifecycle(await readSse(res), "response.completed");
    const added = p.filter((e) => e.type === "response.output_item.added").map((e) => e.item.type);
    assert.deepEqual(added, ["reasoning", "message"]);
    const summary = p.find((e) => e.type === "response.reasoning_summary_text.done").text;
    assert.equal(wordCount(summary), 3);
    assert.equal(p.at(-1).response.usage.output_tokens_details.reasoning_tokens, 3);
    assert.equal(p.at(-1).response.usage.output_tokens, 15);
  }));

Deno.test("responses: max_output_tokens gives status incomplete", () =>
  withSim(async (sim) => {
    const res = await post(sim, PATH, responsesBody("привет", { stream: true, max_output_tokens: 5 }));
    const p = checkLifecycle(await readSse(res), "response.incomplete");
    const final = p.at(-1).response;
    assert.equal(final.status, "incomplete");
    assert.deepEqual(final.incomplete_details, { reason: "max_output_tokens" });
    assert.equal(final.output[0].status, "incomplete");
    assert.equal(final.usage.output_tokens, 5);
    const json = await (await post(sim, PATH, responsesBody("привет", { max_output_tokens: 2 }))).json();
    assert.equal(json.status, "incomplete");
  }));

Deno.test("responses: loop_limit ends incomplete at the provider's limit below the request's budget", () =>
  withSim(async (sim) => {
    const text = "привет [[sim:loop_limit=4]]";
    const res = await post(sim, PATH, responsesBody(text, { stream: true, max_output_tokens: 100 }));
    const final = checkLifecycle(await readSse(res), "response.incomplete").at(-1).response;
    assert.deepEqual(final.incomplete_details, { reason: "max_output_tokens" });
    assert.equal(final.usage.output_tokens, 4);
    const json = await (await post(sim, PATH, responsesBody(text))).json();
    assert.equal(json.status, "incomplete");
    assert.deepEqual(json.incomplete_details, { reason: "max_output_tokens" });
    assert.equal(json.usage.output_tokens, 4);
  }));

Deno.test("responses: function_call item, status completed; function_call_output answer", () =>
  withSim(async (sim) => {
    const res = await post(
      sim,
      PATH,
      responsesBody("ищи [[sim:tool]]", { stream: true, tools: TOOL_DEFS.responses }),
    );
    const p = checkLifecycle(await readSse(res), "response.completed");
    const item = p.find((e) => e.type === "response.output_item.added").item;
    assert.equal(item.type, "function_call");
    assert.equal(item.arguments, "");
    const args = p.filter((e) => e.type === "response.function_call_arguments.delta").map((e) => e.delta)
      .join("");
    assert.deepEqual(JSON.parse(args), { query: "ищи" });
    assert.equal(p.find((e) => e.type === "response.function_call_arguments.done").arguments, args);
    assert.equal(p.at(-1).response.status, "completed");
    assert.equal(p.at(-1).response.output[0].type, "function_call");
    const forced = await (await post(
      sim,
      PATH,
      responsesBody("x", { tools: TOOL_DEFS.responses, tool_choice: "required" }),
    ))
      .json();
    assert.equal(forced.output[0].name, "lookup");
    const after = await (await post(sim, PATH, {
      model: "m",
      tools: TOOL_DEFS.responses,
      input: [
        { role: "user", content: "погода?" },
        { type: "function_call", call_id: "call_1", name: "lookup", arguments: "{}" },
        { type: "function_call_output", call_id: "call_1", output: "18°C" },
      ],
    })).json();
    assert.ok(after.output[0].content[0].text.startsWith("Результат инструмента получен"));
  }));

Deno.test("responses: errors use the OpenAI error shape", () =>
  withSim(async (sim) => {
    let res = await post(sim, PATH, responsesBody("x"), { headers: {} });
    assert.equal(res.status, 401);
    assert.equal((await res.json()).error.code, "invalid_api_key");
    res = await post(sim, PATH, "not-json");
    assert.equal(res.status, 400);
    assert.equal((await res.json()).error.type, "invalid_request_error");
  }));

Deno.test("responses: the official openai SDK reads the stream", () =>
  withSim(async (sim) => {
    const client = new OpenAI({ apiKey: "sk-test", baseURL: sim.url + "/v1", maxRetries: 0 });
    const stream = client.responses.stream({
      model: "gpt-sim",
      input: "Привет [[sim:words=25]] [[sim:reasoning]]",
    });
    const final = await stream.finalResponse();
    assert.equal(wordCount(final.output_text), 25);
    assert.equal(final.usage?.output_tokens, 33);
  }));
