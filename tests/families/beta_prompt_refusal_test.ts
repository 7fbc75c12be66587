/**
 * Family beta through a running gateway: the operator's server prompt before the client's system prompt
 * on every id but the fable ones, on all three surfaces (spec §2.1); the provider's structured refusal as
 * `cyber_refusal` (spec §7.3): a free 400 before anything was sent, the stream's error frame after.
 */
import assert from "node:assert/strict";
import { parseConfig } from "../../src/config/env.ts";
import { ANTHROPIC_HEADERS, post, type TestGateway, withGateway } from "../support/harness.ts";
import { anthropicClient, openaiClient, rejection } from "../support/sdk_util.ts";
import { readFrames, SURFACE_PATH, surfaceBody } from "../support/sse_client.ts";

const SERVER_PROMPT = "Серверная инструкция оператора.";
const BETA_IDS = ["beta-opus-5", "beta-sonnet-5", "beta-haiku-4-5", "beta-fable-5", "beta-fable-5-1"];
const WITHOUT_PROMPT = new Set(["beta-fable-5", "beta-fable-5-1"]);
const CACHED_BLOCK = {
  type: "text" as const,
  text: "Ты агент.",
  cache_control: { type: "ephemeral" as const, ttl: "1h" as const },
};

/** The `system` the simulator (beta's Messages upstream) received last. */
function upstreamSystem(t: TestGateway): unknown {
  return (t.sim.requests.at(-1)!.body as Record<string, unknown>).system;
}

/** The system text blocks as plain strings (the encoder may send a string or blocks). */
function systemTexts(system: unknown): string[] {
  if (system === undefined) return [];
  if (typeof system === "string") return [system];
  return (system as { text: string }[]).map((b) => b.text);
}

Deno.test("beta: the server prompt goes first on every id but the fable ones, on all three surfaces", () =>
  withGateway(async (t) => {
    const k = await t.newKey("5.00");
    const anthropic = anthropicClient(t, k.key);
    const openai = openaiClient(t, k.key);
    for (const model of BETA_IDS) {
      const prompted = !WITHOUT_PROMPT.has(model);
      const pre = prompted ? [{ type: "text", text: SERVER_PROMPT }] : [];
      const user = [{ role: "user" as const, content: "привет" }];

      // Messages, native: the string form, the block form (cache_control intact), no system at all.
      await anthropic.messages.create({ model, max_tokens: 20, system: "Будь краток.", messages: user });
      assert.deepEqual(
        upstreamSystem(t),
        prompted ? [...pre, { type: "text", text: "Будь краток." }] : "Будь краток.",
        model,
      );
      await anthropic.messages.create({ model, max_tokens: 20, system: [CACHED_BLOCK], messages: user });
      assert.deepEqual(upstreamSystem(t), [...pre, CACHED_BLOCK], model);
      await anthropic.messages.create({ model, max_tokens: 20, messages: user, stream: true }).then(drain);
      assert.deepEqual(upstreamSystem(t), prompted ? SERVER_PROMPT : undefined, model);

      // Chat Completions and Responses, translated: first, before the client's own.
      await openai.chat.completions.create({
        model,
        max_tokens: 20,
        messages: [{ role: "system", content: "Будь краток." }, ...user],
      });
      // The Messages encoder joins the instruction texts with a blank line.
      const expected = (prompted ? [SERVER_PROMPT, "Будь краток."] : ["Будь краток."]).join("\n\n");
      assert.equal(systemTexts(upstreamSystem(t)).join("\n\n"), expected, `${model} chat`);
      const r = await openai.responses.create({
        model,
        max_output_tokens: 20,
        instructions: "Будь краток.",
        input: "привет",
      });
      assert.equal(systemTexts(upstreamSystem(t)).join("\n\n"), expected, `${model} responses`);
      assert.ok(!JSON.stringify(r).includes(SERVER_PROMPT), "the client never sees the server prompt");
    }
  }, { BETA_SERVER_PROMPT: SERVER_PROMPT }));

Deno.test("beta: the default server prompt asks for Russian; the hold covers it", () =>
  withGateway(async (t) => {
    const def = parseConfig({}).BETA_SERVER_PROMPT;
    assert.match(def, /русском/);
    const k = await t.newKey("5.00");
    const res = await post(
      t.url + SURFACE_PATH.messages,
      k.key,
      surfaceBody("messages", "beta-haiku-4-5", "x", false),
      ANTHROPIC_HEADERS,
    );
    assert.equal(res.status, 200);
    await res.body?.cancel();
    assert.equal(upstreamSystem(t), def);
    const long = await withHold("Инструкция. ".repeat(500));
    assert.ok(long > hold(res), `${long} > ${hold(res)}: the prompt's tokens are held too`);
  }));

const hold = (r: Response) => Number(r.headers.get("x-gateway-hold-usd"));

/** The hold of one small beta-haiku-4-5 request on a gateway with this server prompt. */
async function withHold(prompt: string): Promise<number> {
  let out = 0;
  await withGateway(async (t) => {
    const k = await t.newKey("5.00");
    const body = surfaceBody("messages", "beta-haiku-4-5", "x", false);
    const res = await post(t.url + SURFACE_PATH.messages, k.key, body, ANTHROPIC_HEADERS);
    await res.body?.cancel();
    out = hold(res);
  }, { BETA_SERVER_PROMPT: prompt });
  return out;
}

async function drain(s: AsyncIterable<unknown>) {
  for await (const _ of s) { /* read to the end */ }
}

const REFUSE = "напиши эксплойт [[sim:refusal]] [[sim:words=0]]";
const REFUSE_LATE = "напиши эксплойт [[sim:refusal]] [[sim:words=5]]";

async function account(t: TestGateway, id: string) {
  return (await t.admin("GET", `/admin/keys/${id}`)).json;
}

Deno.test("beta: a refusal before anything was sent is a free 400 cyber_refusal, JSON and stream, on every surface", () =>
  withGateway(async (t) => {
    const k = await t.newKey("1.00");
    for (const surface of ["messages", "chat", "responses"] as const) {
      for (const stream of [false, true]) {
        for (const text of stream ? [REFUSE] : [REFUSE, REFUSE_LATE]) {
          const where = `${surface} stream=${stream} ${text}`;
          const res = await post(
            t.url + SURFACE_PATH[surface],
            k.key,
            surfaceBody(surface, "beta-sonnet-5", text, stream),
            ANTHROPIC_HEADERS,
          );
          const json = await res.json();
          assert.equal(res.status, 400, `${where}: ${JSON.stringify(json)}`);
          assert.equal(json.error.code ?? json.error.type, "cyber_refusal", where);
          assert.match(res.headers.get("content-type") ?? "", /application\/json/, where);
        }
      }
    }
    const a = await account(t, k.id);
    assert.equal(a.spent_usd, "0.00");
    assert.equal(a.held_usd, "0.00");
    assert.equal(a.balance_usd, "1.00");
  }));

Deno.test("beta: a refusal after the stream started ends it with the cyber_refusal error frame, billed for what ran", () =>
  withGateway(async (t) => {
    const k = await t.newKey("1.00");
    for (const surface of ["messages", "chat", "responses"] as const) {
      const res = await post(
        t.url + SURFACE_PATH[surface],
        k.key,
        surfaceBody(surface, "beta-sonnet-5", REFUSE_LATE, true),
        ANTHROPIC_HEADERS,
      );
      assert.equal(res.status, 200, surface);
      const { raw } = await readFrames(res);
      assert.ok(raw.includes('"cyber_refusal"'), `${surface}: ${raw.slice(-400)}`);
      assert.ok(!raw.includes('"refusal"}'), `${surface}: no refusal stop goes out: ${raw.slice(-400)}`);
    }
    const rows = (await (await fetch(`${t.url}/v1/usage/requests?limit=10`, {
      headers: { authorization: `Bearer ${k.key}` },
    })).json()).data as { status: string; output_tokens: number; charged_usd: string }[];
    assert.equal(rows.length, 3);
    for (const r of rows) {
      assert.equal(r.status, "error");
      assert.equal(r.output_tokens, 5, "the provider's usage: five words were generated");
      assert.notEqual(r.charged_usd, "0.00");
    }
    const a = await account(t, k.id);
    assert.equal(a.held_usd, "0.00");
  }));

Deno.test("beta: the SDKs see cyber_refusal as a 400", () =>
  withGateway(async (t) => {
    const k = await t.newKey("1.00");
    const e1 = await rejection(
      anthropicClient(t, k.key).messages.create({
        model: "beta-opus-5",
        max_tokens: 50,
        messages: [{ role: "user", content: REFUSE_LATE }],
      }),
      "anthropic",
    );
    assert.equal(e1.status, 400);
    assert.equal(e1.error.error.code ?? e1.error.error.type, "cyber_refusal");
    const e2 = await rejection(
      openaiClient(t, k.key).chat.completions.create({
        model: "beta-opus-5",
        max_tokens: 50,
        messages: [{ role: "user", content: REFUSE }],
        stream: true,
      }),
      "openai",
    );
    assert.equal(e2.status, 400, String(e2));
    assert.equal(e2.code, "cyber_refusal");
  }));
