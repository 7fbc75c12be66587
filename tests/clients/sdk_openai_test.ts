/**
 * Contract: the official openai-node SDK drives Chat Completions and Responses of every family
 * through the gateway (§4.1, §2.6, §6, §4.7): text, streams, usage, tool calls, /theta/v1.
 */
import assert from "node:assert/strict";
import type OpenAI from "openai";
import { startTestGateway } from "../support/harness.ts";
import {
  assertChatUsage,
  assertResponsesUsage,
  assertRussian,
  FAMILY_MODELS,
  openaiClient,
  parseArgs,
  TOOL_NAME,
  TOOL_PROMPT,
  WEATHER_SCHEMA,
} from "../support/sdk_util.ts";

const PROMPT = "Привет, расскажи о себе [[sim:words=12]]";

/** Families whose Chat field list is closed (spec §4.6): stream_options is not on it. */
const CLOSED_LIST = new Set(["gamma", "eta"]);

async function chatChecks(client: OpenAI, model: string, where: string, closedList = false) {
  const msgs = [{ role: "user" as const, content: PROMPT }];
  // Non-stream.
  const r = await client.chat.completions.create({ model, max_tokens: 200, messages: msgs });
  assert.equal(r.object, "chat.completion", where);
  assert.equal(r.model, model, where);
  assert.equal(r.choices.length, 1, where);
  assertRussian(r.choices[0]!.message.content, `${where} chat`);
  assert.equal(r.choices[0]!.message.role, "assistant", where);
  assert.equal(r.choices[0]!.finish_reason, "stop", where);
  assertChatUsage(r.usage, `${where} chat`);

  // Stream without usage: text arrives in deltas, one finish_reason "stop".
  const s = await client.chat.completions.create({ model, max_tokens: 200, messages: msgs, stream: true });
  let text = "";
  const finishes: string[] = [];
  let chunks = 0;
  for await (const c of s) {
    chunks++;
    assert.equal(c.object, "chat.completion.chunk", where);
    for (const ch of c.choices) {
      text += ch.delta?.content ?? "";
      if (ch.finish_reason) finishes.push(ch.finish_reason);
    }
  }
  assert.ok(chunks > 1, `${where}: ${chunks} chunks`);
  assertRussian(text, `${where} chat stream`);
  assert.deepEqual(finishes, ["stop"], where);

  // Stream with include_usage: the last chunk carries the usage.
  const withUsage = {
    model,
    max_tokens: 200,
    messages: msgs,
    stream: true as const,
    stream_options: { include_usage: true },
  };
  if (closedList) {
    await assert.rejects(client.chat.completions.create(withUsage), (e: any) => {
      assert.deepEqual(
        [e.status, e.code, e.param],
        [400, "delta_parameter_unavailable", "stream_options"],
        where,
      );
      return true;
    });
    return;
  }
  const su = await client.chat.completions.create(withUsage);
  const all: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
  for await (const c of su) all.push(c);
  const last = all.at(-1)!;
  assertChatUsage(last.usage, `${where} include_usage last chunk ${JSON.stringify(last)}`);
  assertRussian(all.map((c) => c.choices[0]?.delta?.content ?? "").join(""), `${where} usage stream`);
}

async function responsesChecks(client: OpenAI, model: string, where: string) {
  const r = await client.responses.create({ model, max_output_tokens: 200, input: PROMPT });
  assert.equal(r.object, "response", where);
  assert.equal(r.status, "completed", where);
  assert.equal(r.model, model, where);
  assertRussian(r.output_text, `${where} responses`);
  assert.ok(r.output.some((o) => o.type === "message"), where);
  assertResponsesUsage(r.usage, `${where} responses`);

  const s = await client.responses.create({ model, max_output_tokens: 200, input: PROMPT, stream: true });
  const events: OpenAI.Responses.ResponseStreamEvent[] = [];
  for await (const e of s) events.push(e);
  assert.equal(events[0]?.type, "response.created", where);
  const last = events.at(-1)!;
  assert.equal(last.type, "response.completed", `${where}: last event ${last.type}`);
  events.forEach((e, i) => assert.equal(e.sequence_number, i, `${where}: sequence_number ${i}`));
  const deltas = events.flatMap((e) => e.type === "response.output_text.delta" ? [e.delta] : []).join("");
  assertRussian(deltas, `${where} responses stream deltas`);
  if (last.type === "response.completed") {
    assert.equal(last.response.status, "completed", where);
    const msg = last.response.output.find((o) => o.type === "message");
    assert.ok(msg && msg.type === "message", `${where}: no message item`);
    const finalText = msg.content.map((c) => c.type === "output_text" ? c.text : "").join("");
    assert.equal(finalText, deltas, `${where}: completed text differs from deltas`);
    assertResponsesUsage(last.response.usage, `${where} responses stream`);
  }

  // The SDK's stream helper assembles the same answer.
  const helper = client.responses.stream({ model, max_output_tokens: 200, input: PROMPT });
  const final = await helper.finalResponse();
  assertRussian(final.output_text, `${where} responses.stream().finalResponse()`);
}

async function toolChecks(client: OpenAI, model: string, where: string) {
  const chat = await client.chat.completions.create({
    model,
    max_tokens: 200,
    messages: [{ role: "user", content: TOOL_PROMPT }],
    tools: [{
      type: "function",
      function: { name: TOOL_NAME, description: "Погода в городе", parameters: WEATHER_SCHEMA },
    }],
  });
  const choice = chat.choices[0]!;
  assert.equal(choice.finish_reason, "tool_calls", `${where}: ${JSON.stringify(choice)}`);
  const call = choice.message.tool_calls?.[0];
  assert.ok(call && call.type === "function", `${where}: ${JSON.stringify(choice.message)}`);
  assert.equal(call.function.name, TOOL_NAME, where);
  assert.ok(call.id.length > 0, where);
  parseArgs(call.function.arguments, `${where} chat tool`);
  assertChatUsage(chat.usage, `${where} chat tool`);

  // Streamed tool call: the arguments reassembled from deltas parse as JSON.
  const s = await client.chat.completions.create({
    model,
    max_tokens: 200,
    stream: true,
    messages: [{ role: "user", content: TOOL_PROMPT }],
    tools: [{ type: "function", function: { name: TOOL_NAME, parameters: WEATHER_SCHEMA } }],
  });
  let args = "";
  let name = "";
  let finish = "";
  for await (const c of s) {
    for (const tc of c.choices[0]?.delta?.tool_calls ?? []) {
      name += tc.function?.name ?? "";
      args += tc.function?.arguments ?? "";
    }
    finish = c.choices[0]?.finish_reason ?? finish;
  }
  assert.equal(finish, "tool_calls", where);
  assert.equal(name, TOOL_NAME, where);
  parseArgs(args, `${where} chat stream tool`);

  const resp = await client.responses.create({
    model,
    max_output_tokens: 200,
    input: TOOL_PROMPT,
    tools: [{
      type: "function",
      name: TOOL_NAME,
      description: "Погода в городе",
      parameters: WEATHER_SCHEMA,
      strict: false,
    }],
  });
  const fc = resp.output.find((o) => o.type === "function_call");
  assert.ok(fc && fc.type === "function_call", `${where}: ${JSON.stringify(resp.output)}`);
  assert.equal(fc.name, TOOL_NAME, where);
  assert.ok(fc.call_id.length > 0, where);
  parseArgs(fc.arguments, `${where} responses tool`);
  assertResponsesUsage(resp.usage, `${where} responses tool`);
}

Deno.test("openai SDK: chat completions, responses and tool calls for every family", async (t) => {
  const gw = await startTestGateway();
  try {
    const k = await gw.newKey("50.00");
    const client = openaiClient(gw, k.key);
    for (const [family, model] of Object.entries(FAMILY_MODELS)) {
      await t.step(
        `${family} (${model}) chat.completions`,
        () => chatChecks(client, model, `${family} chat`, CLOSED_LIST.has(family)),
      );
      await t.step(
        `${family} (${model}) responses`,
        () => responsesChecks(client, model, `${family} responses`),
      );
      await t.step(`${family} (${model}) tool calls`, () => toolChecks(client, model, `${family} tools`));
    }
    await t.step("alpha: prompt_tokens_details.cached_tokens (§2.6)", async () => {
      const messages = [{
        role: "user" as const,
        content: "Привет, как дела у тебя [[sim:cached=4]] [[sim:words=3]]",
      }];
      const r = await client.chat.completions.create({ model: "k3", messages });
      assertChatUsage(r.usage, "alpha cached");
      assert.equal(r.usage?.prompt_tokens_details?.cached_tokens, 4, JSON.stringify(r.usage));
      const s = await client.chat.completions.create({
        model: "k3",
        messages,
        stream: true,
        stream_options: { include_usage: true },
      });
      let usage: OpenAI.CompletionUsage | null | undefined;
      for await (const c of s) usage = c.usage ?? usage;
      assertChatUsage(usage, "alpha cached stream");
      assert.equal(usage?.prompt_tokens_details?.cached_tokens, 4, JSON.stringify(usage));
    });
    await t.step("theta under baseURL /theta/v1", async () => {
      const theta = openaiClient(gw, k.key, "/theta");
      await chatChecks(theta, FAMILY_MODELS.theta!, "/theta chat");
      await responsesChecks(theta, FAMILY_MODELS.theta!, "/theta responses");
      await toolChecks(theta, FAMILY_MODELS.theta!, "/theta tools");
    });
    const { json } = await gw.admin("GET", `/admin/keys/${k.id}`);
    assert.equal(json.held_usd, "0.00", JSON.stringify(json));
    assert.notEqual(json.spent_usd, "0.00", JSON.stringify(json));
  } finally {
    await gw.close();
  }
});
