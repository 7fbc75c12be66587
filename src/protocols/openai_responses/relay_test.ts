import assert from "node:assert/strict";
import type { ErrorObject } from "../../errors/error_object.ts";
import { replaySse } from "../sse_parse.ts";
import { openaiResponses } from "./mod.ts";
import { createRelay } from "./relay.ts";
import { decodeFrames, fixture, parseSse, testCtx } from "./testing/helpers.ts";

const err: ErrorObject = {
  message: "Провайдер слишком долго не присылал данные, поток закрыт. [stream_timeout · req_test]",
  code: "stream_timeout",
  type: "timeout_error",
  param: null,
  action: "Повторите запрос.",
  request_id: "req_test",
};

Deno.test("native request and response: only the model changes", () => {
  const body = { model: "alias", input: "hi", store: true, tools: [] };
  assert.deepEqual(
    openaiResponses.prepareNativeRequest(body, { upstreamModel: "real", defaultMaxTokens: 1 }),
    {
      ...body,
      model: "real",
    },
  );
  assert.equal(body.model, "alias");
  const json = { id: "resp_1", object: "response", model: "real", output: [] };
  assert.deepEqual(openaiResponses.relayResponse(json, testCtx({}, "alias")), { ...json, model: "alias" });
});

Deno.test("relay is byte-identical when the model matches, and taps the same IR events as the decoder", async () => {
  const text = await fixture("text.sse");
  const frames = await replaySse(text);
  const relay = createRelay(testCtx({}, "gpt-5.3-codex"));
  const out = frames.map((f) => relay.push(f)).join("");
  assert.equal(out, text);
  assert.deepEqual(relay.events(), decodeFrames(frames));
  assert.deepEqual(relay.events(), []); // cleared
  assert.equal(relay.error(err), ""); // terminal already relayed
});

Deno.test("relay rewrites response.model in lifecycle events only", async () => {
  const frames = await replaySse(await fixture("function_call.sse"));
  const relay = createRelay(testCtx({}, "alias"));
  const out = await parseSse(frames.map((f) => relay.push(f)).join(""));
  assert.equal(out.length, frames.length);
  for (const [i, f] of out.entries()) {
    if (f.data.response) assert.equal(f.data.response.model, "alias");
    else assert.equal(JSON.stringify(f.data), frames[i]!.data);
    assert.equal(f.data.sequence_number, i);
  }
  const ir = relay.events();
  assert.deepEqual(ir.at(-1), { type: "finish", reason: "tool_calls" });
});

Deno.test("relay error continues sequence numbers: error then response.failed", async () => {
  const frames = await replaySse(await fixture("text.sse"));
  const relay = createRelay(testCtx({}, "alias"));
  let out = frames.slice(0, 5).map((f) => relay.push(f)).join(""); // up to the first text delta (seq 4)
  relay.push({ data: "[DONE]" });
  out += relay.error(err);
  assert.equal(relay.error(err), "");
  const parsed = await parseSse(out);
  assert.deepEqual(parsed.map((f) => f.data.sequence_number), [0, 1, 2, 3, 4, 5, 6]);
  assert.deepEqual(parsed.slice(-2).map((f) => f.event), ["error", "response.failed"]);
  assert.equal(parsed[5]!.data.code, "stream_timeout");
  assert.deepEqual(parsed[5]!.data.error, err);
  const res = parsed[6]!.data.response;
  assert.equal(res.id, "resp_phase_001");
  assert.equal(res.model, "alias");
  assert.equal(res.status, "failed");
  assert.deepEqual(res.error, { code: "stream_timeout", message: err.message });
  assert.equal(relay.events().filter((e) => e.type === "text_delta").length, 1);
});

Deno.test("upstream failure frames are held back; error() then renders error + response.failed", async () => {
  const frames = await replaySse(await fixture("error_failed.sse"));
  const relay = createRelay(testCtx({}, "gpt-4o-mini-2024-07-18"));
  let out = relay.push(frames[0]!) + relay.push(frames[1]!);
  assert.equal(relay.push(frames[2]!), ""); // upstream error event (seq 2)
  assert.equal(relay.events().at(-1)?.type, "error");
  out += relay.error(err);
  const parsed = await parseSse(out);
  assert.deepEqual(parsed.map((f) => [f.event, f.data.sequence_number]), [
    ["response.created", 0],
    ["response.in_progress", 1],
    ["error", 2],
    ["response.failed", 3],
  ]);
  assert.equal(parsed[2]!.data.code, "stream_timeout");

  const lone = createRelay(testCtx({}, "alias"));
  lone.push(frames[0]!);
  assert.equal(lone.push(frames[3]!), ""); // a response.failed without a preceding error event
  assert.deepEqual(lone.events().at(-1), {
    type: "error",
    message: "You exceeded your current quota, please check your plan and billing details.",
    upstreamCode: "insufficient_quota",
  });

  const fresh = await parseSse(createRelay(testCtx({}, "alias")).error(err));
  assert.deepEqual(fresh.map((f) => [f.event, f.data.sequence_number]), [["error", 0], [
    "response.failed",
    1,
  ]]);
  assert.equal(fresh[1]!.data.response.id, "resp_1");
});
