import assert from "node:assert/strict";
import { thrownGatewayError } from "../../errors/testing/thrown_gateway_error.ts";
import { findModel } from "../../catalog/models.ts";
import type { ProtocolName } from "../../protocols/codec.ts";
import { alphaPolicy } from "./policy.ts";

const MSGS = [{ role: "user", content: "x" }];
const run = (model: string, body: Record<string, unknown>, surface: ProtocolName = "openai_chat") =>
  alphaPolicy().rawBody(findModel(model)!, surface, { model, messages: MSGS, ...body });

Deno.test("alpha rules: a body with nothing to remove comes back as the same object", () => {
  const body = { model: "k3", messages: MSGS, reasoning_effort: "whatever-level", x_unknown: { a: 1 } };
  assert.equal(alphaPolicy().rawBody(findModel("k3")!, "openai_chat", body), body);
});

Deno.test("alpha rules: temperature and top_p removed on Chat and Responses, kept on Messages", () => {
  for (const surface of ["openai_chat", "openai_responses"] as const) {
    const out = run("k3", { temperature: 0.3, top_p: null, keep_me: 1 }, surface);
    assert.equal("temperature" in out, false, surface);
    assert.equal("top_p" in out, false, surface);
    assert.equal(out.keep_me, 1);
  }
  const m = run("k3", { temperature: 0.3, top_p: 0.9 }, "anthropic");
  assert.equal(m.temperature, 0.3);
  assert.equal(m.top_p, 0.9);
});

Deno.test("alpha rules: refusals carry code, param and the row's detail", () => {
  const cases: [string, Record<string, unknown>, string, string, ProtocolName?][] = [
    ["k3", { messages: [] }, "invalid_request", "messages"],
    ["k3", { messages: null }, "invalid_request", "messages"],
    ["k3", { n: 2 }, "invalid_parameter", "n"],
    ["k3", { top_k: 0 }, "invalid_parameter", "top_k"],
    ["k3", { frequency_penalty: 0.1 }, "invalid_parameter", "frequency_penalty"],
    ["k3", { presence_penalty: -1 }, "invalid_parameter", "presence_penalty"],
    ["k3", { max_tokens: 0 }, "invalid_parameter", "max_tokens"],
    ["k3", { max_completion_tokens: 2.5 }, "invalid_parameter", "max_completion_tokens"],
    ["k3", { stream: "yes" }, "invalid_request", "stream"],
    ["k3", { stream_options: { include_usage: "yes" } }, "invalid_parameter", "stream_options.include_usage"],
    [
      "k3",
      { stream_options: { include_obfuscation: false } },
      "unsupported_parameter",
      "stream_options.include_obfuscation",
    ],
    ["k3", { stream_options: "x" }, "invalid_parameter", "stream_options"],
    ["k3", { reasoning_effort: "" }, "invalid_parameter", "reasoning_effort"],
    ["k3", { reasoning_effort: 3 }, "invalid_parameter", "reasoning_effort"],
    ["k3", { thinking: { type: "enabled", keep: "all" } }, "unsupported_parameter", "thinking"],
    ["alpha-for-coding", { thinking: { type: "enabled" } }, "invalid_parameter", "thinking"],
    ["alpha-for-coding", { tool_choice: "required" }, "invalid_parameter", "tool_choice"],
    ["alpha-for-coding-highspeed", { tool_choice: "required" }, "invalid_parameter", "tool_choice"],
    ["alpha-for-coding", { tool_choice: "required" }, "invalid_parameter", "tool_choice", "openai_responses"],
    ["alpha-for-coding", { tool_choice: { type: "any" } }, "invalid_parameter", "tool_choice", "anthropic"],
    ["k3", { service_tier: "flex" }, "invalid_parameter", "service_tier"],
    ["k3", { service_tier: "flex" }, "invalid_parameter", "service_tier", "openai_responses"],
    ["k3", { store: true }, "invalid_parameter", "store"],
    ["k3", { store: true }, "invalid_parameter", "store", "openai_responses"],
    ["k3", { reasoning: { effort: "" } }, "invalid_parameter", "reasoning.effort", "openai_responses"],
    ["k3", { seed: 1.5 }, "invalid_parameter", "seed"],
    ["k3", { metadata: { a: 1 } }, "invalid_parameter", "metadata.a"],
    ["k3", { prediction: { type: "content" } }, "invalid_parameter", "prediction.content"],
    ["k3", { safety_identifier: 5 }, "invalid_parameter", "safety_identifier"],
  ];
  for (const [model, body, code, param, surface] of cases) {
    const err = thrownGatewayError(() => run(model, body, surface));
    const where = `${model} ${surface ?? "chat"} ${JSON.stringify(body)}`;
    assert.equal(err.code, code, where);
    assert.equal(err.param, param, where);
    assert.ok(err.detail && err.detail.length > 0, where);
  }
});

Deno.test("alpha rules: accepted values pass on the models and surfaces that allow them", () => {
  const ok: [string, Record<string, unknown>, ProtocolName?][] = [
    ["k3", { tool_choice: "required" }],
    ["alpha-for-coding", { tool_choice: "auto" }],
    ["alpha-for-coding", { thinking: { type: "enabled", keep: "all" } }],
    ["k3", { n: 1, frequency_penalty: 0, presence_penalty: 0, top_k: 40, seed: -3, store: false }],
    ["k3", { metadata: Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, "v"])) }],
    ["k3", { prediction: { type: "content", content: [{ type: "text", text: "x" }] } }],
    ["k3", { stream_options: { include_usage: true }, service_tier: "priority" }],
    ["k3", { n: null, thinking: null, reasoning_effort: null }],
    ["k3", { reasoning: { effort: "whatever-level", summary: "auto" } }, "openai_responses"],
    ["k3", { tool_choice: { type: "any" }, temperature: 0.5 }, "anthropic"],
    ["alpha-for-coding", { n: 2, store: true }, "anthropic"],
  ];
  for (const [model, body, surface] of ok) {
    assert.doesNotThrow(() => run(model, body, surface), JSON.stringify(body));
  }
});
