/**
 * Family beta's server tools through the gateway with the official Anthropic SDK (spec §4.5, §8.4): a refusal
 * is a 400 naming the field, before anything is held or sent; an accepted pair reaches the upstream unchanged.
 */
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import { withGateway } from "../support/harness.ts";
import { anthropicClient, rejection, TOOL_NAME, WEATHER_SCHEMA } from "../support/sdk_util.ts";

type Obj = Record<string, unknown>;
const SEARCH: Obj = {
  type: "web_search_20250305",
  name: "web_search",
  max_uses: 2,
  allowed_domains: ["example.com", "docs.example.com/api/*"],
  allowed_callers: ["direct"],
};
const FETCH: Obj = {
  type: "web_fetch_20250910",
  name: "web_fetch",
  max_uses: 3,
  max_content_tokens: 25_000,
  blocked_domains: ["ads.example.com"],
  citations: { enabled: true },
};
const CLIENT: Obj = { name: TOOL_NAME, description: "Погода", input_schema: WEATHER_SCHEMA };
const messages = [{ role: "user" as const, content: "Найди новости [[sim:search=1]] [[sim:words=8]]" }];

const U = "unsupported_parameter";
const I = "invalid_parameter";

interface Refusal {
  param: string;
  code: string;
  model: string;
  tools: Obj[];
  stream: boolean;
}
const r = (param: string, code: string, model: string, tools: Obj[], stream = false): Refusal => ({
  param,
  code,
  model,
  tools,
  stream,
});

const REFUSED: Refusal[] = [
  r("tools.0.user_location", U, "beta-opus-5", [{ ...SEARCH, user_location: {} }]),
  r("tools.0.type", U, "beta-sonnet-5", [{ ...SEARCH, type: "web_search_20260101" }]),
  r("tools.1.type", U, "beta-haiku-4-5", [CLIENT, { type: "code_execution_20250522" }]),
  r("tools.0.cache_control", U, "beta-fable-5", [{ ...FETCH, cache_control: {} }]),
  r("tools.0.citations.x", U, "beta-opus-5", [{ ...FETCH, citations: { enabled: true, x: 1 } }]),
  r("tools.0.max_uses", I, "beta-fable-5-1", [{ ...SEARCH, max_uses: 6 }]),
  r("tools.1.max_content_tokens", I, "beta-opus-5", [SEARCH, { ...FETCH, max_content_tokens: 25_001 }], true),
  r("tools.0.blocked_domains", I, "beta-opus-5", [{ ...SEARCH, blocked_domains: ["b.com"] }]),
  r("tools.0.allowed_domains.1", I, "beta-opus-5", [{
    ...SEARCH,
    allowed_domains: ["a.com", "https://a.com"],
  }], true),
  r("tools.0.blocked_domains.0", I, "beta-fable-5", [{ ...FETCH, blocked_domains: ["a.com/docs"] }]),
  r("tools.2.type", I, "beta-opus-5", [SEARCH, FETCH, SEARCH]),
];

Deno.test("beta server tools through the gateway (Anthropic SDK)", async (t) => {
  await withGateway(async (gw) => {
    const k = await gw.newKey("1.00");
    const client = anthropicClient(gw, k.key);

    await t.step("refusals: 400 with code and param, nothing sent, nothing held or charged", async () => {
      gw.sim.requests.length = 0;
      for (const { param: what, model, tools, code, param, stream } of REFUSED) {
        const e = await rejection(
          client.messages.create({ model, max_tokens: 50, messages, tools: tools as any, stream }),
          what,
        );
        const where = `${what}: ${e?.constructor?.name} ${e?.message}`;
        assert.ok(e instanceof Anthropic.BadRequestError, where);
        assert.equal(e.status, 400, where);
        const body = e.error as any;
        assert.equal(body?.type, "error", where);
        assert.equal(body?.error?.code, code, where);
        assert.equal(body?.error?.param, param, where);
        assert.match(String(e.message), /[а-яё]/i, where);
        assert.equal(e.headers?.get("x-gateway-hold-usd"), null, where);
      }
      assert.equal(gw.sim.requests.length, 0, "no refused request reached the upstream");
      const { json } = await gw.admin("GET", `/admin/keys/${k.id}`);
      assert.deepEqual([json.balance_usd, json.held_usd], ["1.00", "0.00"]);
    });

    for (const model of ["beta-opus-5", "beta-fable-5"]) {
      await t.step(
        `${model}: a valid web_search + web_fetch pair reaches the upstream unchanged`,
        async () => {
          gw.sim.requests.length = 0;
          const tools = [CLIENT, SEARCH, FETCH];
          const m = await client.messages.create({ model, max_tokens: 200, messages, tools: tools as any });
          assert.equal(m.model, model);
          const types = m.content.map((b) => b.type);
          assert.deepEqual(types.slice(0, 2), ["server_tool_use", "web_search_tool_result"], `${types}`);
          assert.equal(gw.sim.requests.length, 1);
          const up = gw.sim.requests[0]!;
          assert.equal(up.path, "/v1/messages");
          const sent = (up.body as Obj).tools as Obj[];
          assert.equal(sent.length, tools.length);
          tools.forEach((tool, i) =>
            assert.equal(JSON.stringify(sent[i]), JSON.stringify(tool), `tools.${i}`)
          );
        },
      );
    }
  });
});

Deno.test("beta server tools: count_tokens applies the same rules before quoting", () =>
  withGateway(async (t) => {
    const k = await t.newKey("1.00");
    const client = anthropicClient(t, k.key);
    const bad = { ...SEARCH, max_uses: 6 };
    const err = await rejection(
      client.messages.countTokens({ model: "beta-opus-5", messages, tools: [bad] as any }),
      "count_tokens",
    );
    assert.equal(err.status, 400);
    assert.equal(err.error.error.code, I);
    assert.equal(err.error.error.param, "tools.0.max_uses");
    const ok = await client.messages.countTokens({ model: "beta-opus-5", messages, tools: [SEARCH] as any });
    assert.ok(ok.input_tokens > 0);
  }));
