import assert from "node:assert/strict";
import type { ErrorObject } from "../../errors/error_object.ts";
import type { IREvent } from "../../ir/events.ts";
import { replaySse } from "../sse_parse.ts";
import { createRelay } from "./relay.ts";
import { fixture, testCtx } from "./testing/helpers.ts";

async function relayAll(name: string, includeUsage: boolean, model: string) {
  const relay = createRelay({ ...testCtx({ includeUsage }), model });
  let out = "";
  const events: IREvent[] = [];
  for (const f of await replaySse(await fixture(name), [5, 77, 300])) {
    out += relay.push(f);
    events.push(...relay.events());
  }
  out += relay.end();
  events.push(...relay.events());
  return { out, events, relay };
}

Deno.test("ChatRelay forwards bytes unchanged when nothing needs to change", async () => {
  const text = await fixture("text_include_usage.sse");
  const { out, events } = await relayAll("text_include_usage.sse", true, "gpt-4.1-nano-2025-04-14");
  assert.equal(out, text);
  assert.deepEqual(events.map((e) => e.type), ["start", "text_delta", "usage", "finish"]);
});

Deno.test("ChatRelay drops the usage chunk when the client did not ask, leaving null usage bytes alone", async () => {
  const { out, events } = await relayAll("text_include_usage.sse", false, "gpt-4.1-nano-2025-04-14");
  const frames = out.split("\n\n").filter((f) => f !== "");
  assert.equal(frames.length, 4);
  assert.equal(frames[3], "data: [DONE]");
  const upstream = (await fixture("text_include_usage.sse")).split("\n\n").filter((f) => f !== "");
  for (const [i, f] of frames.slice(0, 3).entries()) {
    const chunk = JSON.parse(f.slice(6));
    assert.equal(chunk.usage, null); // no numbers: forwarded byte for byte
    assert.equal(f, upstream[i]);
  }
  assert.equal(JSON.parse(frames[0]!.slice(6)).obfuscation, "Qup1BsQ3");
  // metering still sees the usage
  assert.deepEqual(events.find((e) => e.type === "usage"), {
    type: "usage",
    usage: { inputTokens: 16, outputTokens: 300, cachedInputTokens: 0, reasoningTokens: 0 },
  });
});

Deno.test("ChatRelay removes usage from a finish chunk and rewrites the model", async () => {
  const { out, events } = await relayAll("usage_on_finish_chunk.sse", false, "gw-model");
  const frames = out.split("\n\n").filter((f) => f !== "");
  assert.equal(frames.length, 5);
  const finish = JSON.parse(frames[3]!.slice(6));
  assert.equal(finish.model, "gw-model");
  assert.equal("usage" in finish, false);
  assert.equal(finish.choices[0].finish_reason, "length");
  assert.deepEqual(events.at(-1), { type: "finish", reason: "length" });
});

Deno.test("ChatRelay keeps tool-call frames byte-identical", async () => {
  const text = await fixture("parallel_tool_calls.sse");
  const { out, events } = await relayAll("parallel_tool_calls.sse", false, "gpt-4o");
  assert.equal(out, text);
  assert.equal(events.filter((e) => e.type === "tool_call_start").length, 2);
});

Deno.test("ChatRelay withholds an upstream error chunk and reports it as an event", async () => {
  const { out, events, relay } = await relayAll("mid_stream_error.sse", false, "gpt-4.1-nano-2025-04-14");
  assert.equal(out.split("\n\n").filter((f) => f !== "").length, 2);
  assert.equal(events.at(-1)?.type, "error");
  const err: ErrorObject = {
    message: "m",
    code: "stream_service_error",
    type: "api_error",
    param: null,
    action: "a",
    request_id: "req_test",
  };
  assert.equal(
    relay.error(err),
    `data: ${JSON.stringify({ error: err, request_id: "req_test" })}\n\ndata: [DONE]\n\n`,
  );
});

Deno.test("ChatRelay end() closes a stream that had finish_reason but no [DONE]", async () => {
  const { out, events } = await relayAll("finish_without_done.sse", false, "llama-3.3-70b");
  assert.ok(out.endsWith("data: [DONE]\n\n"));
  assert.deepEqual(events.at(-1), { type: "finish", reason: "stop" });
  const cut = createRelay(testCtx());
  cut.push({
    data: JSON.stringify({ id: "x", model: "gw-model", choices: [{ index: 0, delta: { content: "a" } }] }),
  });
  assert.equal(cut.end(), "");
  assert.equal(cut.events().some((e) => e.type === "finish"), false);
});

Deno.test("ChatRelay events() clears what it returned", () => {
  const relay = createRelay(testCtx());
  relay.push({
    data: JSON.stringify({ id: "x", model: "gw-model", choices: [{ index: 0, delta: { content: "a" } }] }),
  });
  assert.equal(relay.events().length, 2);
  assert.deepEqual(relay.events(), []);
});
