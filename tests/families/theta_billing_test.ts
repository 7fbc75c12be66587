/**
 * Theta's prices through a running gateway (spec §8.1): input and output per the theta table; a plus model's
 * whole request on the second row when its input exceeds 256,000 tokens — the upstream's count at
 * settlement, the estimate when the upstream reports none; 0.01 once for a request that searched, reported
 * either as `usage.server_tool_use.web_search_requests` or as a `url_citation` annotation; no cache;
 * multiplier 1 with private membership. Expected amounts come from the spec's table, not the gateway's.
 */
import assert from "node:assert/strict";
import { formatUsd, parseUsd } from "../../src/money/usd.ts";
import { bodyOfEstimate } from "../support/estimate_body.ts";
import { ANTHROPIC_HEADERS, post, type TestGateway, withGateway } from "../support/harness.ts";
import { usageRows } from "../support/usage_rows.ts";

/** spec §8.1, USD per 1M tokens: [input, output] up to the tier, and above 256,000 input tokens. */
const TABLE: Record<string, { base: [string, string]; above?: [string, string] }> = {
  "theta3.8-max": { base: ["2.00", "6.00"] },
  "theta3.7-max": { base: ["2.50", "7.50"] },
  "theta3.7-plus": { base: ["0.40", "1.60"], above: ["1.20", "4.80"] },
  "theta3.6-plus": { base: ["0.50", "3.00"], above: ["2.00", "6.00"] },
  "theta3.5-plus": { base: ["0.40", "2.40"], above: ["0.50", "3.00"] },
  "theta3.5-omni-plus": { base: ["1.40", "8.30"] },
  "theta3.8-omni-flash": { base: ["0.15", "0.47"] },
};
const CENT = parseUsd("0.01");

/** The spec's row for a request of `input` tokens. */
function rowFor(model: string, input: number): [string, string] {
  const t = TABLE[model]!;
  return t.above && input > 256_000 ? t.above : t.base;
}
/** input × input rate / 1M + output × output rate / 1M, in pico-USD (exact). */
function price(model: string, input: number, output: number): bigint {
  const [i, o] = rowFor(model, input);
  return (BigInt(input) * parseUsd(i) + BigInt(output) * parseUsd(o)) / 1_000_000n;
}

/** The key's usage rows by request id, read once (the usage report limits its read rate). */
async function rowsById(t: TestGateway, key: string): Promise<Map<string, Record<string, any>>> {
  return new Map((await usageRows(t, key)).map((r) => [r.request_id, r]));
}

/** The request id of an answer, its body read to the end (the row is written when it settles). */
async function answered(res: Response, where: string): Promise<string> {
  assert.equal(res.status, 200, where);
  await res.text();
  return res.headers.get("request-id")!;
}

/** Asserts a row's rates and charge are the spec's for its own tokens, plus the search fee when searched. */
function assertCharged(row: Record<string, any>, model: string, searched: boolean, where: string) {
  const [i, o] = rowFor(model, row.input_tokens);
  assert.deepEqual(row.rates_usd_per_million, { input: i, cache_read: i, output: o }, where);
  assert.equal(row.web_search_fee_usd, searched ? "0.01" : "0.00", where);
  const want = price(model, row.input_tokens, row.output_tokens) + (searched ? CENT : 0n);
  assert.equal(row.charged_usd, formatUsd(want), where);
  assert.equal(row.written_off_usd, "0.00", where);
}

const chat = (model: string, text: string, extra: Record<string, unknown> = {}) => ({
  model,
  max_tokens: 100,
  messages: [{ role: "user", content: text }],
  ...extra,
});

Deno.test("theta: each of the seven models is charged at its row of the table, exactly", () =>
  withGateway(async (t) => {
    const k = await t.newKey("10.00");
    const ids: [string, string][] = [];
    for (const model of Object.keys(TABLE)) {
      const text = "цена [[sim:prompt_tokens=1000]] [[sim:words=7]]";
      ids.push([
        model,
        await answered(await post(t.url + "/v1/chat/completions", k.key, chat(model, text)), model),
      ]);
    }
    const rows = await rowsById(t, k.key);
    for (const [model, id] of ids) {
      const row = rows.get(id)!;
      assert.deepEqual([row.input_tokens, row.output_tokens, row.usage_source], [1000, 7, "upstream"], model);
      assertCharged(row, model, false, model);
    }
  }));

Deno.test("theta: a plus model switches to the second row for the whole request above 256,000 upstream input tokens", () =>
  withGateway(async (t) => {
    const k = await t.newKey("20.00");
    const ids: [string, number, string][] = [];
    for (const model of Object.keys(TABLE)) {
      for (const input of [256_000, 256_001]) {
        const where = `${model} ${input}`;
        const text = `длинный [[sim:prompt_tokens=${input}]] [[sim:words=40]]`;
        const res = await post(t.url + "/v1/chat/completions", k.key, chat(model, text));
        ids.push([model, input, await answered(res, where)]);
        // The hold was priced at the estimate's row (a few tokens): the same as count_tokens quotes.
        const quote = await post(
          t.url + "/v1/messages/count_tokens",
          k.key,
          chat(model, text),
          ANTHROPIC_HEADERS,
        );
        assert.equal(res.headers.get("x-gateway-hold-usd"), (await quote.json()).quote.reserve_usd, where);
      }
    }
    const rows = await rowsById(t, k.key);
    for (const [model, input, id] of ids) {
      const row = rows.get(id)!;
      assert.deepEqual([row.input_tokens, row.output_tokens], [input, 40], `${model} ${input}`);
      assertCharged(row, model, false, `${model} ${input}`);
    }
    // The switch exactly: theta3.7-plus at 256,001 costs its input and its output at 1.20 / 4.80.
    const plus = ids.filter(([m]) => m === "theta3.7-plus").map((
      [, input, id],
    ) => [input, rows.get(id)!.charged_usd]);
    assert.deepEqual(plus, [[256_000, "0.102464"], [256_001, "0.3073932"]]);
  }));

Deno.test("theta: the tier on a stream and through another surface, settled from the stream's usage", () =>
  withGateway(async (t) => {
    const k = await t.newKey("10.00");
    const ids: [number, string][] = [];
    for (const input of [256_000, 256_001]) {
      const res = await post(t.url + "/theta/v1/responses", k.key, {
        model: "theta3.6-plus",
        max_output_tokens: 100,
        stream: true,
        input: `поток [[sim:prompt_tokens=${input}]] [[sim:words=30]]`,
      });
      ids.push([input, await answered(res, `stream ${input}`)]);
    }
    const rows = await rowsById(t, k.key);
    for (const [input, id] of ids) {
      const row = rows.get(id)!;
      assert.deepEqual([row.input_tokens, row.output_tokens, row.stream], [input, 30, true]);
      assertCharged(row, "theta3.6-plus", false, `responses stream ${input}`);
    }
    assert.deepEqual(ids.map(([, id]) => rows.get(id)!.charged_usd), ["0.12809", "0.512182"]);
  }));

Deno.test("theta: without upstream usage the row is the estimate's — 256,000 and 256,001 estimated input tokens", () =>
  withGateway(async (t) => {
    const k = await t.newKey("20.00");
    const ids: [string, number, string][] = [];
    for (const model of ["theta3.7-plus", "theta3.6-plus", "theta3.5-plus", "theta3.8-max"]) {
      for (const input of [256_000, 256_001]) {
        const where = `${model} ${input}`;
        const body = bodyOfEstimate(
          model,
          input,
          { max_tokens: 100 },
          "[[sim:fault=no_usage]] [[sim:words=5]] ",
        );
        const res = await post(t.url + "/v1/chat/completions", k.key, body);
        ids.push([model, input, await answered(res, where)]);
        // The hold is the estimate's row too: input × its input rate + 100 × its output rate.
        const [i, o] = rowFor(model, input);
        const hold = (BigInt(input) * parseUsd(i) + 100n * parseUsd(o)) / 1_000_000n;
        assert.equal(res.headers.get("x-gateway-hold-usd"), formatUsd(hold), where);
      }
    }
    const rows = await rowsById(t, k.key);
    for (const [model, input, id] of ids) {
      const row = rows.get(id)!;
      assert.deepEqual([row.usage_source, row.input_tokens], ["estimated", input], `${model} ${input}`);
      assertCharged(row, model, false, `${model} ${input}`);
    }
  }));

Deno.test("theta: a search costs 0.01 once — usage.server_tool_use or a url_citation, JSON and stream, every surface", () =>
  withGateway(async (t) => {
    const k = await t.newKey("10.00");
    const model = "theta3.8-omni-flash";
    const cases: [string, number][] = [
      ["[[sim:search=3]]", 3],
      ["[[sim:url_citation]]", 1],
      ["[[sim:search=2]] [[sim:url_citation]]", 2],
      ["", 0],
    ];
    const bodies = {
      chat: (text: string, stream: boolean) => ({ ...chat(model, text), stream }),
      messages: (text: string, stream: boolean) => ({ ...chat(model, text), stream }),
      responses: (text: string, stream: boolean) => ({ model, max_output_tokens: 100, input: text, stream }),
    };
    const paths = { chat: "/v1/chat/completions", messages: "/v1/messages", responses: "/v1/responses" };
    const ids: [string, number, string][] = [];
    for (const [directive, searches] of cases) {
      for (const surface of ["chat", "messages", "responses"] as const) {
        for (const stream of [false, true]) {
          const where = `${surface} stream=${stream} «${directive}»`;
          const body = bodies[surface](`новости ${directive} [[sim:words=9]]`, stream);
          ids.push([
            where,
            searches,
            await answered(await post(t.url + paths[surface], k.key, body, ANTHROPIC_HEADERS), where),
          ]);
        }
      }
    }
    // A Chat client of the Chat upstream sees the citation as the upstream wrote it.
    const json =
      await (await post(t.url + "/v1/chat/completions", k.key, chat(model, "[[sim:url_citation]]"))).json();
    assert.equal(json.choices[0].message.annotations[0].type, "url_citation");
    const rows = await rowsById(t, k.key);
    for (const [where, searches, id] of ids) {
      const row = rows.get(id)!;
      assert.deepEqual([row.web_search_requests, row.usage_source], [searches, "upstream"], where);
      assertCharged(row, model, searches > 0, where);
    }
    const { json: key } = await t.admin("GET", `/admin/keys/${k.id}`);
    const spent = [...rows.values()].reduce((n, r) => n + parseUsd(r.charged_usd), 0n);
    assert.deepEqual([key.spent_usd, key.held_usd], [formatUsd(spent), "0.00"]);
  }));

Deno.test("theta: no cache — cached tokens the upstream reports are charged as input", () =>
  withGateway(async (t) => {
    const k = await t.newKey("10.00");
    const text = "кэш [[sim:prompt_tokens=2000]] [[sim:cached=1500]] [[sim:words=10]]";
    const id = await answered(
      await post(t.url + "/v1/chat/completions", k.key, chat("theta3.7-max", text)),
      "cache",
    );
    const row = (await rowsById(t, k.key)).get(id)!;
    assert.deepEqual([row.input_tokens, row.cached_input_tokens, row.output_tokens], [2000, 1500, 10]);
    assertCharged(row, "theta3.7-max", false, "cached");
    assert.equal(row.charged_usd, "0.005075", "2,000 × 2.50 + 10 × 7.50 per 1M");
  }));

Deno.test("theta: multiplier 1 with private membership — the same hold, charge and quote as without", () =>
  withGateway(async (t) => {
    const member = await t.newKey("10.00", { membership: "private" });
    const plain = await t.newKey("10.00");
    const body = chat(
      "theta3.8-max",
      "членство [[sim:prompt_tokens=3000]] [[sim:words=20]] [[sim:search=1]]",
    );
    const seen: [string | null, string][] = [];
    for (const k of [member, plain]) {
      const res = await post(t.url + "/v1/chat/completions", k.key, body);
      const row = (await rowsById(t, k.key)).get(await answered(res, "membership"))!;
      assertCharged(row, "theta3.8-max", true, "membership");
      seen.push([res.headers.get("x-gateway-hold-usd"), row.charged_usd]);
    }
    assert.deepEqual(seen[0], seen[1]);
    assert.equal(seen[0]![1], "0.01612", "3,000 × 2.00 + 20 × 6.00 per 1M + 0.01");
    const quote = await post(
      t.url + "/theta/v1/messages/count_tokens",
      member.key,
      chat("theta3.8-max", "x"),
      ANTHROPIC_HEADERS,
    );
    assert.equal((await quote.json()).quote.membership_discount, false);
  }));
