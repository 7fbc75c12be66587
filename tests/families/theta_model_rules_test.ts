/**
 * Theta's model rules through a running gateway (spec §4.7): `theta3.7-max` refuses an image with 400
 * `invalid_parameter` naming the image block on every surface and path; `theta3.5-omni-plus` takes at most
 * 196,608 input tokens; an output budget above a model's limit is refused, for all seven ids. Every refusal
 * is local: nothing held, nothing sent upstream.
 */
import assert from "node:assert/strict";
import { bodyOfEstimate } from "../support/estimate_body.ts";
import { ANTHROPIC_HEADERS, post, type TestGateway, withGateway } from "../support/harness.ts";

const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
const DATA_URL = `data:image/png;base64,${PNG}`;

type Surface = "messages" | "chat" | "responses";
const PATH: Record<Surface, string> = {
  messages: "/messages",
  chat: "/chat/completions",
  responses: "/responses",
};

async function send(t: TestGateway, key: string, base: "/v1" | "/theta/v1", surface: Surface, body: unknown) {
  const res = await post(t.url + base + PATH[surface], key, body, ANTHROPIC_HEADERS);
  const json = await res.json();
  return { status: res.status, error: json.error as Record<string, any> | undefined, json };
}

/** Bodies with an image at a known place, per surface: [surface, body without model, the image's param]. */
const IMAGE_CASES: [Surface, Record<string, unknown>, string][] = [
  ["chat", {
    max_tokens: 50,
    messages: [
      { role: "user", content: "Привет" },
      { role: "assistant", content: "Здравствуйте" },
      {
        role: "user",
        content: [{ type: "text", text: "Что на картинке?" }, {
          type: "image_url",
          image_url: { url: DATA_URL },
        }],
      },
    ],
  }, "messages.2.content.1"],
  ["messages", {
    max_tokens: 50,
    messages: [{
      role: "user",
      content: [
        { type: "text", text: "Что на картинке?" },
        { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
      ],
    }],
  }, "messages.0.content.1"],
  ["messages", {
    max_tokens: 50,
    messages: [
      { role: "user", content: "Сделай снимок экрана" },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_01", name: "shot", input: {} }] },
      {
        role: "user",
        content: [{
          type: "tool_result",
          tool_use_id: "toolu_01",
          content: [
            { type: "text", text: "снимок" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
          ],
        }],
      },
    ],
    tools: [{ name: "shot", input_schema: { type: "object" } }],
  }, "messages.2.content.0.content.1"],
  ["responses", {
    max_output_tokens: 50,
    input: [{
      role: "user",
      content: [{ type: "input_text", text: "Что на картинке?" }, {
        type: "input_image",
        image_url: DATA_URL,
      }],
    }],
  }, "input.0.content.1"],
];

Deno.test("theta3.7-max: an image is 400 invalid_parameter naming the block, on every surface and both paths; free", () =>
  withGateway(async (t) => {
    const k = await t.newKey("5.00");
    for (const [surface, body, param] of IMAGE_CASES) {
      for (const base of ["/v1", "/theta/v1"] as const) {
        for (const stream of [false, true]) {
          const r = await send(t, k.key, base, surface, { ...body, model: "theta3.7-max", stream });
          const where = `${base} ${surface} ${param} stream=${stream}`;
          assert.equal(r.status, 400, where);
          assert.deepEqual([r.error?.code, r.error?.param], ["invalid_parameter", param], where);
          assert.match(r.error?.message, /theta3\.7-max принимает только текст/, where);
        }
      }
    }
    assert.equal(t.sim.requests.length, 0, "nothing went upstream");
    const { json } = await t.admin("GET", `/admin/keys/${k.id}`);
    assert.deepEqual([json.balance_usd, json.held_usd, json.spent_usd], ["5.00", "0.00", "0.00"]);
    // count_tokens quotes only what generation accepts.
    const quote = await send(t, k.key, "/theta/v1", "messages", {
      ...IMAGE_CASES[1]![1],
      model: "theta3.7-max",
    });
    assert.equal(quote.status, 400);
    const counted = await post(t.url + "/theta/v1/messages/count_tokens", k.key, {
      ...IMAGE_CASES[1]![1],
      model: "theta3.7-max",
    }, ANTHROPIC_HEADERS);
    assert.deepEqual([counted.status, (await counted.json()).error.param], [400, "messages.0.content.1"]);
  }));

Deno.test("theta: the six models with images take the same bodies", () =>
  withGateway(async (t) => {
    const k = await t.newKey("5.00");
    const models = ["theta3.8-max", "theta3.7-plus", "theta3.6-plus", "theta3.5-plus", "theta3.5-omni-plus"];
    for (const model of [...models, "theta3.8-omni-flash"]) {
      for (const [surface, body, param] of IMAGE_CASES) {
        const r = await send(t, k.key, "/theta/v1", surface, { ...body, model });
        assert.equal(r.status, 200, `${model} ${surface} ${param}: ${JSON.stringify(r.error)}`);
      }
    }
    // A text-only request still goes through on theta3.7-max.
    const text = await send(t, k.key, "/v1", "chat", {
      model: "theta3.7-max",
      max_tokens: 20,
      messages: [{ role: "user", content: "Привет" }],
    });
    assert.equal(text.status, 200);
  }));

/** The seven ids with their output limits (spec §4.7). */
const OUTPUT_LIMITS: [string, number][] = [
  ["theta3.8-max", 131_072],
  ["theta3.7-max", 131_072],
  ["theta3.7-plus", 65_536],
  ["theta3.6-plus", 65_536],
  ["theta3.5-plus", 65_536],
  ["theta3.5-omni-plus", 65_536],
  ["theta3.8-omni-flash", 131_072],
];

Deno.test("theta: an output budget at the model's limit is served, one above is 400 invalid_parameter naming the field", () =>
  withGateway(async (t) => {
    const k = await t.newKey("20.00");
    const text = "Привет [[sim:words=3]]";
    for (const [model, limit] of OUTPUT_LIMITS) {
      const bodies: [Surface, string, (n: number) => Record<string, unknown>][] = [
        ["messages", "max_tokens", (n) => ({ max_tokens: n, messages: [{ role: "user", content: text }] })],
        ["chat", "max_tokens", (n) => ({ max_tokens: n, messages: [{ role: "user", content: text }] })],
        ["chat", "max_completion_tokens", (n) => ({
          max_completion_tokens: n,
          messages: [{ role: "user", content: text }],
        })],
        ["responses", "max_output_tokens", (n) => ({ max_output_tokens: n, input: text })],
      ];
      for (const [surface, field, body] of bodies) {
        const where = `${model} ${surface} ${field}`;
        const at = await send(t, k.key, "/v1", surface, { ...body(limit), model });
        assert.equal(at.status, 200, `${where} at ${limit}: ${JSON.stringify(at.error)}`);
        const sent = t.sim.requests.length;
        const over = await send(t, k.key, "/theta/v1", surface, { ...body(limit + 1), model });
        assert.equal(over.status, 400, where);
        assert.deepEqual([over.error?.code, over.error?.param], ["invalid_parameter", field], where);
        assert.match(over.error?.message, new RegExp(`Предел вывода модели ${model}: ${limit}\\.`), where);
        assert.equal(t.sim.requests.length, sent, `${where}: the refusal went nowhere`);
      }
    }
    const { json } = await t.admin("GET", `/admin/keys/${k.id}`);
    assert.equal(json.held_usd, "0.00");
  }));

Deno.test("theta3.5-omni-plus: input up to 196,608 tokens; 196,609 is 400 context_length_exceeded, other theta ids take it", () =>
  withGateway(async (t) => {
    const k = await t.newKey("20.00");
    const omni = "theta3.5-omni-plus";
    const atLimit = bodyOfEstimate(omni, 196_608, { max_tokens: 20 });
    const counted = await post(t.url + "/theta/v1/messages/count_tokens", k.key, atLimit, ANTHROPIC_HEADERS);
    assert.equal((await counted.json()).input_tokens, 196_608, "the test's estimate is the gateway's");
    for (const surface of ["chat", "messages"] as const) {
      const ok = await send(t, k.key, "/v1", surface, atLimit);
      assert.equal(ok.status, 200, `${surface}: ${JSON.stringify(ok.error)}`);
      const over = await send(t, k.key, "/v1", surface, bodyOfEstimate(omni, 196_609, { max_tokens: 20 }));
      assert.deepEqual([over.status, over.error?.code], [400, "context_length_exceeded"], surface);
      assert.match(
        over.error?.message,
        /Оценка входа 196609 токенов, модель theta3\.5-omni-plus принимает не больше 196608\./,
      );
    }
    // The input limit and the whole output limit fill the 262,144-token window exactly.
    const full = await send(t, k.key, "/v1", "chat", bodyOfEstimate(omni, 196_608, { max_tokens: 65_536 }));
    assert.equal(full.status, 200, JSON.stringify(full.error));
    const plus = await send(
      t,
      k.key,
      "/v1",
      "chat",
      bodyOfEstimate("theta3.5-plus", 196_609, { max_tokens: 20 }),
    );
    assert.equal(plus.status, 200, "a 1,000,000-token model takes the same input");
  }, { BODY_LIMIT_BYTES: String(4 * 1024 * 1024) }));
