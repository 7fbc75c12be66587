/**
 * Contract: the official SDKs map the gateway's errors (§7.1–§7.6, §5, §6) to their error classes,
 * with our status, our code readable from the parsed body, and the request id of the headers.
 */
import assert from "node:assert/strict";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { startTestGateway } from "../support/harness.ts";
import { anthropicClient, FAMILY_MODELS, openaiClient, rejection } from "../support/sdk_util.ts";

type Cls = abstract new (...args: any[]) => Error;
const user = (content: string) => [{ role: "user" as const, content }];
const MID = "Привет [[sim:fault=error_mid]] [[sim:words=20]]";

/** The code a mid-stream `[[sim:fault=error_mid]]` surfaces as (see stream_faults_test.ts). */
const IN_STREAM_CODE: Record<string, string> = {
  alpha: "alpha_unavailable",
  beta: "stream_service_error",
  gamma: "delta_upstream_error",
  eta: "delta_upstream_error",
  theta: "stream_service_error",
};
/** The code an upstream 503 before the first byte surfaces as. */
const UPSTREAM_503_CODE: Record<string, string> = {
  alpha: "alpha_unavailable",
  beta: "upstream_unavailable",
  gamma: "delta_unavailable",
  eta: "delta_unavailable",
  theta: "theta_unavailable",
};

/**
 * openai-node: class, status, `err.code` / `err.error.code`, the request id in the body and the
 * `request-id` header; `err.requestID` (read from x-request-id) matches it where it is sent.
 */
function checkOpenAI(
  err: any,
  cls: Cls,
  status: number | undefined,
  code: string,
  where: string,
) {
  const w = `${where}: ${err?.constructor?.name} ${err?.message} ${JSON.stringify(err?.error)}`;
  assert.ok((err as unknown) instanceof cls, w);
  assert.equal(err.status, status, w);
  assert.equal(err.code, code, w);
  assert.equal(err.error?.code, code, w);
  const rid = err.headers?.get("request-id");
  assert.match(String(rid), /^req_/, w);
  assert.equal(err.error?.request_id, rid, w);
  assert.ok(String(err.message).includes(`[${code} · ${rid}]`), w);
  if (err.requestID != null) assert.equal(err.requestID, rid, `${w}: requestID`);
}

/** @anthropic-ai/sdk: class, status, `err.error.error.code`, `err.requestID` = request-id = body ids. */
function checkAnthropic(err: any, cls: Cls, status: number | undefined, code: string, where: string) {
  const w = `${where}: ${err?.constructor?.name} ${err?.message}`;
  assert.ok((err as unknown) instanceof cls, w);
  assert.equal(err.status, status, w);
  assert.equal(err.error?.type, "error", w);
  assert.equal(err.error?.error?.code, code, w);
  assert.ok(String(err.message).includes(code), w);
  const rid = err.headers?.get("request-id");
  assert.match(String(rid), /^req_/, w);
  assert.equal(err.requestID, rid, w);
  assert.equal(err.error?.error?.request_id, rid, w);
  if (status !== undefined) assert.equal(err.error?.request_id, rid, w);
}

Deno.test("SDK error classes, statuses, codes and request ids", async (t) => {
  const gw = await startTestGateway();
  try {
    const k = await gw.newKey("50.00");
    const broke = await gw.newKey("0.00");
    const oa = openaiClient(gw, k.key);
    const an = anthropicClient(gw, k.key);

    await t.step("invalid key → 401 invalid_api_key", async () => {
      const bad = "gd-0000000000000000000000000000invalid";
      const o = openaiClient(gw, bad);
      const a = anthropicClient(gw, bad);
      for (const model of Object.values(FAMILY_MODELS)) {
        const where = `invalid key ${model}`;
        let e = await rejection(o.chat.completions.create({ model, messages: user("x") }), where);
        checkOpenAI(e, OpenAI.AuthenticationError, 401, "invalid_api_key", `${where} chat`);
        assert.equal(e.type, "authentication_error", where);
        e = await rejection(o.responses.create({ model, input: "x" }), where);
        checkOpenAI(e, OpenAI.AuthenticationError, 401, "invalid_api_key", `${where} responses`);
        e = await rejection(a.messages.create({ model, max_tokens: 10, messages: user("x") }), where);
        checkAnthropic(e, Anthropic.AuthenticationError, 401, "invalid_api_key", `${where} messages`);
        assert.equal(e.type, "authentication_error", where);
        e = await rejection(a.messages.countTokens({ model, messages: user("x") }), where);
        checkAnthropic(e, Anthropic.AuthenticationError, 401, "invalid_api_key", `${where} count_tokens`);
      }
    });

    await t.step("unknown model → 404 model_not_found", async () => {
      const model = "no-such-model-1";
      let e = await rejection(oa.chat.completions.create({ model, messages: user("x") }), "chat");
      checkOpenAI(e, OpenAI.NotFoundError, 404, "model_not_found", "chat");
      assert.equal(e.param, "model");
      e = await rejection(oa.responses.create({ model, input: "x", stream: true }), "responses");
      checkOpenAI(e, OpenAI.NotFoundError, 404, "model_not_found", "responses");
      e = await rejection(an.messages.create({ model, max_tokens: 10, messages: user("x") }), "messages");
      checkAnthropic(e, Anthropic.NotFoundError, 404, "model_not_found", "messages");
      // A non-theta model under /theta/v1.
      const theta = openaiClient(gw, k.key, "/theta");
      e = await rejection(theta.chat.completions.create({ model: "k3", messages: user("x") }), "/theta k3");
      checkOpenAI(e, OpenAI.NotFoundError, 404, "model_not_found", "/theta k3");
    });

    await t.step("zero balance → 402 insufficient_credit", async () => {
      const o = openaiClient(gw, broke.key);
      const a = anthropicClient(gw, broke.key);
      for (const model of Object.values(FAMILY_MODELS)) {
        const where = `402 ${model}`;
        let e = await rejection(o.chat.completions.create({ model, messages: user("x") }), where);
        checkOpenAI(e, OpenAI.APIError, 402, "insufficient_credit", `${where} chat`);
        assert.equal(e.type, "billing_error", where);
        e = await rejection(o.responses.create({ model, input: "x" }), where);
        checkOpenAI(e, OpenAI.APIError, 402, "insufficient_credit", `${where} responses`);
        e = await rejection(a.messages.create({ model, max_tokens: 10, messages: user("x") }), where);
        checkAnthropic(e, Anthropic.PaymentRequiredError, 402, "insufficient_credit", `${where} messages`);
      }
    });

    await t.step("bad request (chat messages: [], responses input: []) → 400", async () => {
      for (const model of Object.values(FAMILY_MODELS)) {
        const where = `${model} empty`;
        let e = await rejection(oa.chat.completions.create({ model, messages: [] }), `${where} chat`);
        assert.equal(typeof e?.code, "string", `${where} chat: ${e}`);
        checkOpenAI(e, OpenAI.BadRequestError, 400, e.code, `${where} chat`);
        assert.equal(e.type, "invalid_request_error", where);
        assert.equal(e.param, "messages", where);
        e = await rejection(oa.responses.create({ model, input: [] }), `${where} responses`);
        assert.equal(typeof e?.code, "string", `${where} responses: ${e}`);
        checkOpenAI(e, OpenAI.BadRequestError, 400, e.code, `${where} responses`);
      }
    });

    await t.step("bad request (Messages messages: []) → 400", async () => {
      for (const model of Object.values(FAMILY_MODELS)) {
        const where = `${model} empty messages`;
        const e = await rejection(an.messages.create({ model, max_tokens: 10, messages: [] }), where);
        assert.equal(typeof e?.error?.error?.code, "string", `${where}: ${e}`);
        checkAnthropic(e, Anthropic.BadRequestError, 400, e.error.error.code, where);
        assert.equal(e.error.error.param, "messages", where);
      }
    });

    await t.step(
      "alpha: err.requestID (x-request-id) equals request-id on Chat/Responses errors (§2.5)",
      async () => {
        const o = openaiClient(gw, broke.key);
        const cases: [string, () => Promise<unknown>][] = [
          ["402 chat", () => o.chat.completions.create({ model: "k3", messages: user("x") })],
          ["402 responses", () => o.responses.create({ model: "k3", input: "x" })],
          [
            "503 chat",
            () => oa.chat.completions.create({ model: "k3", messages: user("x [[sim:fault=status:503]]") }),
          ],
          ["503 responses", () => oa.responses.create({ model: "k3", input: "x [[sim:fault=status:503]]" })],
          ["error_mid chat", async () => {
            const s = await oa.chat.completions.create({ model: "k3", messages: user(MID), stream: true });
            for await (const _ of s) { /* drain */ }
          }],
        ];
        const failures: string[] = [];
        for (const [name, call] of cases) {
          const e = await rejection(call, name);
          const rid = e?.headers?.get("request-id");
          assert.match(String(rid), /^req_/, name);
          if (e.requestID !== rid) {
            failures.push(`${name}: requestID=${e.requestID} request-id=${rid} (${e.status})`);
          }
        }
        assert.deepEqual(failures, []);
      },
    );

    for (const [family, model] of Object.entries(FAMILY_MODELS)) {
      await t.step(`${family} (${model}): error_mid in a stream → the SDK iteration throws`, async () => {
        const code = IN_STREAM_CODE[family]!;
        const text = MID;
        const chat = await oa.chat.completions.create({ model, messages: user(text), stream: true });
        let e = await rejection(async () => {
          for await (const _ of chat) { /* drain */ }
        }, `${model} chat stream`);
        checkOpenAI(e, OpenAI.APIError, undefined, code, `${model} chat stream`);

        const resp = await oa.responses.create({ model, input: text, stream: true });
        e = await rejection(async () => {
          for await (const _ of resp) { /* drain */ }
        }, `${model} responses stream`);
        checkOpenAI(e, OpenAI.APIError, undefined, code, `${model} responses stream`);

        const raw = await an.messages.create({ model, max_tokens: 200, messages: user(text), stream: true });
        e = await rejection(async () => {
          for await (const _ of raw) { /* drain */ }
        }, `${model} messages stream`);
        checkAnthropic(e, Anthropic.APIError, undefined, code, `${model} messages stream`);

        e = await rejection(
          an.messages.stream({ model, max_tokens: 200, messages: user(text) }).finalMessage(),
          `${model} messages.stream()`,
        );
        checkAnthropic(e, Anthropic.APIError, undefined, code, `${model} messages.stream()`);
      });

      await t.step(`${family} (${model}): upstream 503 → our family code`, async () => {
        const code = UPSTREAM_503_CODE[family]!;
        const text = "x [[sim:fault=status:503]]";
        for (const stream of [false, true]) {
          const where = `${model} 503 stream=${stream}`;
          let e = await rejection(oa.chat.completions.create({ model, messages: user(text), stream }), where);
          checkOpenAI(e, OpenAI.InternalServerError, 503, code, `${where} chat`);
          assert.equal(e.type, "api_error", where);
          e = await rejection(oa.responses.create({ model, input: text, stream }), where);
          checkOpenAI(e, OpenAI.InternalServerError, 503, code, `${where} responses`);
          e = await rejection(
            an.messages.create({ model, max_tokens: 10, messages: user(text), stream }),
            where,
          );
          checkAnthropic(e, Anthropic.ServiceUnavailableError, 503, code, `${where} messages`);
        }
      });
    }

    const { json } = await gw.admin("GET", `/admin/keys/${k.id}`);
    assert.equal(json.held_usd, "0.00", JSON.stringify(json));
  } finally {
    await gw.close();
  }
});
