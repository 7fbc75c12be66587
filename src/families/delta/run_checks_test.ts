import assert from "node:assert/strict";
import { emptyUsage } from "../../ir/usage.ts";
import type { IRResponse } from "../../ir/response.ts";
import {
  modelBeforeContent,
  modelInStream,
  modelOfAnswer,
  outputLimitOfAnswer,
  sameUpstreamModel,
} from "./run_checks.ts";

const call = { upstreamModel: "eta-4.6", maxOutputTokens: 100 };
const answer = (over: Partial<IRResponse>): IRResponse => ({
  id: "resp_1",
  model: "eta-4.6",
  content: [{ type: "text", text: "ответ" }],
  stopReason: "stop",
  usage: { ...emptyUsage(), inputTokens: 10, outputTokens: 20 },
  ...over,
});

Deno.test("delta run checks: the model asked for, a dated snapshot of it or no name is the same model", () => {
  assert.equal(sameUpstreamModel("eta-4.6", "eta-4.6"), true);
  assert.equal(sameUpstreamModel("eta-4.6-2026-05-01", "eta-4.6"), true);
  assert.equal(sameUpstreamModel("", "eta-4.6"), true);
  assert.equal(sameUpstreamModel("sim-wrong-model", "eta-4.6"), false);
  assert.equal(sameUpstreamModel("eta-4.60", "eta-4.6"), false);
  assert.equal(sameUpstreamModel("gamma-2.5", "eta-4.6"), false);
});

Deno.test("delta run checks: model mismatch before the 200, in the stream and on a JSON answer", () => {
  assert.equal(modelBeforeContent({ type: "start", id: "r", model: "eta-4.6" }, call), "pass");
  assert.equal(
    modelBeforeContent({ type: "start", id: "r", model: "x" }, call)?.toString(),
    "GatewayError: delta_model_mismatch",
  );
  assert.equal(modelBeforeContent({ type: "text_delta", text: "a" }, call), undefined);
  assert.equal(modelInStream({ type: "start", id: "r", model: "x" }, call)?.code, "delta_model_mismatch");
  assert.equal(modelInStream({ type: "start", id: "r", model: "eta-4.6" }, call), undefined);
  assert.equal(modelInStream({ type: "text_delta", text: "x" }, call), undefined);
  assert.equal(modelOfAnswer(answer({ model: "sim-wrong-model" }), call)?.code, "delta_model_mismatch");
  assert.equal(modelOfAnswer(answer({}), call), undefined);
});

Deno.test("delta run checks: an answer cut below the client's budget, or with none, is the provider's output limit", () => {
  const cut = (outputTokens: number) =>
    answer({ stopReason: "length", usage: { ...emptyUsage(), inputTokens: 10, outputTokens } });
  assert.equal(outputLimitOfAnswer(cut(40), call)?.code, "delta_output_limit_exceeded");
  assert.equal(outputLimitOfAnswer(cut(100), call), undefined, "the client's own budget: an ordinary cut");
  assert.equal(
    outputLimitOfAnswer(cut(40), { ...call, maxOutputTokens: undefined })?.code,
    "delta_output_limit_exceeded",
  );
  assert.equal(
    outputLimitOfAnswer(answer({ stopReason: "length", usage: undefined }), {
      ...call,
      maxOutputTokens: undefined,
    })
      ?.code,
    "delta_output_limit_exceeded",
  );
  assert.equal(
    outputLimitOfAnswer(answer({ stopReason: "length", usage: undefined }), call),
    undefined,
    "with a budget and no usage the cut cannot be told apart: ordinary",
  );
  assert.equal(outputLimitOfAnswer(answer({}), call), undefined);
});
