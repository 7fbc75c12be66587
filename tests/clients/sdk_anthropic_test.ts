/**
 * Contract: the official Anthropic SDK drives the Messages surface of every family through the
 * gateway (§4.1, §2.6, §6, §4.7): text, streams, count_tokens, tool_use, stop reasons, /theta.
 */
import assert from "node:assert/strict";
import type Anthropic from "@anthropic-ai/sdk";
import { startTestGateway } from "../support/harness.ts";
import {
  anthropicClient,
  assertMessagesUsage,
  assertPositiveInt,
  assertRussian,
  FAMILY_MODELS,
  TOOL_NAME,
  TOOL_PROMPT,
  WEATHER_SCHEMA,
} from "../support/sdk_util.ts";

const PROMPT = "Привет, расскажи о себе [[sim:words=12]]";
const user = (content: string) => [{ role: "user" as const, content }];

function textOf(m: Anthropic.Message): string {
  return m.content.map((b) => b.type === "text" ? b.text : "").join("");
}

async function messageChecks(client: Anthropic, model: string, where: string) {
  // Non-stream.
  const m = await client.messages.create({ model, max_tokens: 200, messages: user(PROMPT) });
  assert.equal(m.type, "message", where);
  assert.equal(m.role, "assistant", where);
  assert.equal(m.model, model, where);
  assert.equal(m.stop_reason, "end_turn", where);
  assertRussian(textOf(m), `${where} create`);
  assertMessagesUsage(m.usage, `${where} create`);

  // The SDK's stream helper.
  const helper = client.messages.stream({ model, max_tokens: 200, messages: user(PROMPT) });
  let helperText = "";
  helper.on("text", (d) => helperText += d);
  const final = await helper.finalMessage();
  assert.equal(final.stop_reason, "end_turn", where);
  assertRussian(textOf(final), `${where} stream().finalMessage()`);
  assert.equal(helperText, textOf(final), `${where}: text events differ from the final message`);
  assertMessagesUsage(final.usage, `${where} stream().finalMessage()`);

  // Raw events with stream: true.
  const s = await client.messages.create({ model, max_tokens: 200, messages: user(PROMPT), stream: true });
  const events: Anthropic.RawMessageStreamEvent[] = [];
  for await (const e of s) events.push(e);
  const types = events.map((e) => e.type);
  assert.equal(types[0], "message_start", `${where}: ${types}`);
  assert.equal(types.at(-1), "message_stop", `${where}: ${types}`);
  assert.equal(types.at(-2), "message_delta", `${where}: ${types}`);
  assert.ok(
    types.includes("content_block_start") && types.includes("content_block_stop"),
    `${where}: ${types}`,
  );
  let text = "";
  for (const e of events) {
    if (e.type === "content_block_delta" && e.delta.type === "text_delta") text += e.delta.text;
  }
  assertRussian(text, `${where} raw stream`);
  const delta = events.at(-2);
  assert.ok(delta?.type === "message_delta", where);
  assert.equal(delta.delta.stop_reason, "end_turn", where);
  assertPositiveInt(delta.usage.output_tokens, `${where} message_delta output_tokens`);
  const start = events[0];
  assert.ok(start?.type === "message_start", where);
  assert.equal(start.message.model, model, where);
}

async function countChecks(client: Anthropic, model: string, where: string, estimatedHeader: boolean) {
  const { data, response } = await client.messages.countTokens({ model, messages: user(PROMPT) })
    .withResponse();
  assertPositiveInt(data.input_tokens, `${where} count_tokens`);
  if (estimatedHeader) {
    assert.equal(response.headers.get("x-relay-usage-source"), "estimated", `${where}: §4.7 header`);
  }
}

async function toolChecks(client: Anthropic, model: string, where: string) {
  const tools: Anthropic.Tool[] = [{
    name: TOOL_NAME,
    description: "Погода в городе",
    input_schema: WEATHER_SCHEMA as Anthropic.Tool.InputSchema,
  }];
  const m = await client.messages.create({ model, max_tokens: 200, tools, messages: user(TOOL_PROMPT) });
  assert.equal(m.stop_reason, "tool_use", `${where}: ${JSON.stringify(m)}`);
  const use = m.content.find((b) => b.type === "tool_use");
  assert.ok(use && use.type === "tool_use", `${where}: ${JSON.stringify(m.content)}`);
  assert.equal(use.name, TOOL_NAME, where);
  assert.ok(use.id.length > 0, where);
  assert.ok(use.input && typeof use.input === "object" && !Array.isArray(use.input), where);
  assertMessagesUsage(m.usage, `${where} tool`);

  // Streamed: the helper reassembles the tool input from input_json_delta.
  const final = await client.messages.stream({ model, max_tokens: 200, tools, messages: user(TOOL_PROMPT) })
    .finalMessage();
  assert.equal(final.stop_reason, "tool_use", where);
  const su = final.content.find((b) => b.type === "tool_use");
  assert.ok(su && su.type === "tool_use", `${where}: ${JSON.stringify(final.content)}`);
  assert.equal(su.name, TOOL_NAME, where);
  assert.ok(su.input && typeof su.input === "object", where);

  // Send the tool result back: the model answers in text.
  const next = await client.messages.create({
    model,
    max_tokens: 200,
    tools,
    messages: [
      { role: "user", content: "Какая погода в Москве?" },
      { role: "assistant", content: [{ type: "tool_use", id: use.id, name: use.name, input: use.input }] },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: use.id, content: "Солнечно, +20" }, {
          type: "text",
          text: "Ответь одной фразой [[sim:words=5]]",
        }],
      },
    ],
  });
  assert.equal(next.stop_reason, "end_turn", `${where}: ${JSON.stringify(next)}`);
  assertRussian(textOf(next), `${where} after tool_result`);
}

async function maxTokensChecks(client: Anthropic, model: string, where: string) {
  const params = { model, max_tokens: 5, messages: user("Расскажи длинно [[sim:words=50]]") };
  const m = await client.messages.create(params);
  assert.equal(m.stop_reason, "max_tokens", `${where}: ${JSON.stringify(m)}`);
  assertRussian(textOf(m), `${where} max_tokens`);
  assert.ok(m.usage.output_tokens > 0 && m.usage.output_tokens <= 5, `${where}: ${JSON.stringify(m.usage)}`);
  const final = await client.messages.stream(params).finalMessage();
  assert.equal(final.stop_reason, "max_tokens", `${where} stream: ${JSON.stringify(final)}`);
  assert.ok(final.usage.output_tokens <= 5, `${where} stream: ${JSON.stringify(final.usage)}`);
}

Deno.test("anthropic SDK: messages, streams, count_tokens and tool_use for every family", async (t) => {
  const gw = await startTestGateway();
  try {
    const k = await gw.newKey("50.00");
    const client = anthropicClient(gw, k.key);
    for (const [family, model] of Object.entries(FAMILY_MODELS)) {
      const w = `${family} (${model})`;
      await t.step(`${w} messages`, () => messageChecks(client, model, w));
      await t.step(`${w} count_tokens`, () => countChecks(client, model, w, family === "theta"));
      await t.step(`${w} tool_use`, () => toolChecks(client, model, w));
      await t.step(`${w} max_tokens`, () => maxTokensChecks(client, model, w));
    }
    await t.step("theta under baseURL /theta", async () => {
      const theta = anthropicClient(gw, k.key, "/theta");
      const model = FAMILY_MODELS.theta!;
      await messageChecks(theta, model, "/theta");
      await countChecks(theta, model, "/theta", true);
      await toolChecks(theta, model, "/theta");
      await maxTokensChecks(theta, model, "/theta");
    });
    const { json } = await gw.admin("GET", `/admin/keys/${k.id}`);
    assert.equal(json.held_usd, "0.00", JSON.stringify(json));
    assert.notEqual(json.spent_usd, "0.00", JSON.stringify(json));
  } finally {
    await gw.close();
  }
});
