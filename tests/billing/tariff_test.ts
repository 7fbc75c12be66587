/**
 * The live tariff (§8.1) against a real gateway: the seeded alpha/theta tables, a change through
 * POST /admin/tariff charging the very next request while earlier and in-flight requests keep their
 * rates, validation (400 with param), and persistence across a restart on the same DATA_DIR.
 */
import assert from "node:assert/strict";
import { parseUsd } from "../../src/money/usd.ts";
import type { UsageRow } from "../../src/store/types.ts";
import { post, type TestGateway, withGateway } from "../support/harness.ts";

/** §8.1 verbatim: [model, above_input_tokens, input, cache read, output]. */
const ALPHA = [
  ["k3", null, "3.00", "0.30", "15.00"],
  ["k3-256k", null, "3.00", "0.30", "15.00"],
  ["alpha-for-coding", null, "0.95", "0.19", "4.00"],
  ["alpha-for-coding-highspeed", null, "1.90", "0.38", "8.00"],
] as const;
const THETA = [
  ["theta3.8-max", null, "2.00", null, "6.00"],
  ["theta3.7-max", null, "2.50", null, "7.50"],
  ["theta3.7-plus", null, "0.40", null, "1.60"],
  ["theta3.7-plus", 256_000, "1.20", null, "4.80"],
  ["theta3.6-plus", null, "0.50", null, "3.00"],
  ["theta3.6-plus", 256_000, "2.00", null, "6.00"],
  ["theta3.5-plus", null, "0.40", null, "2.40"],
  ["theta3.5-plus", 256_000, "0.50", null, "3.00"],
  ["theta3.5-omni-plus", null, "1.40", null, "8.30"],
  ["theta3.8-omni-flash", null, "0.15", null, "0.47"],
] as const;

const row = (t: readonly [string, number | null, string, string | null, string]) => [
  t[0],
  t[1],
  t[2],
  t[3],
  t[4],
];
const asTuple = (r: any) => [
  r.model,
  r.above_input_tokens,
  r.input_usd_per_million,
  r.cache_read_usd_per_million,
  r.output_usd_per_million,
];

const chat = (content: string, extra: Record<string, unknown> = {}) => ({
  model: "k3",
  max_tokens: 200,
  messages: [{ role: "user", content }],
  ...extra,
});

/** The key's usage rows from the store, newest first, once pending settlements are written. */
async function usageRows(t: TestGateway, keyId: string): Promise<UsageRow[]> {
  await t.gw.app.accounts.committer.flush();
  return (await t.gw.app.store.listUsage(keyId, { limit: 100 })).rows;
}

/** pico-USD per token of a "USD per 1M tokens" string. */
const perToken = (usdPerMillion: string) => parseUsd(usdPerMillion) / 1_000_000n;

function expectCharged(r: UsageRow, input: string, cacheRead: string, output: string): void {
  assert.deepEqual(r.rates, {
    input: perToken(input),
    cacheRead: perToken(cacheRead),
    output: perToken(output),
    search: 0n,
  });
  const cached = BigInt(r.cachedInputTokens);
  const expected = (BigInt(r.inputTokens) - cached) * perToken(input) + cached * perToken(cacheRead) +
    BigInt(r.outputTokens) * perToken(output);
  assert.ok(r.inputTokens > 0 && r.outputTokens > 0);
  assert.equal(r.charged, expected);
}

Deno.test("tariff: GET /admin/tariff shows the §8.1 alpha and theta tables exactly", async () => {
  await withGateway(async (t) => {
    const res = await t.admin("GET", "/admin/tariff");
    assert.equal(res.status, 200);
    assert.equal(res.json.object, "list");
    const data = res.json.data as any[];
    const pick = (models: readonly (readonly unknown[])[]) => {
      const names = new Set(models.map((m) => m[0]));
      return data.filter((r) => names.has(r.model)).map(asTuple);
    };
    assert.deepEqual(pick(ALPHA), ALPHA.map(row));
    assert.deepEqual(pick(THETA), THETA.map(row));
    for (const r of data) {
      const alpha = ALPHA.some((a) => a[0] === r.model);
      const theta = THETA.some((a) => a[0] === r.model);
      assert.equal(r.member_discount, alpha, r.model);
      if (theta) assert.deepEqual(r.search, { usd: "0.01", per: "request" });
    }
    // Beta, gamma and eta are configurable rows of the same table.
    assert.ok(data.some((r) => r.model === "beta-opus-5" && r.search?.per === "search"));
    assert.ok(data.some((r) => r.model === "gamma-2.5-fast"));
    assert.ok(data.some((r) => r.model === "delta-eta-4.6-xhigh-fast"));
    assert.deepEqual(Object.keys(data[0]).sort(), [
      "above_input_tokens",
      "cache_read_usd_per_million",
      "input_usd_per_million",
      "member_discount",
      "model",
      "output_usd_per_million",
      "search",
    ]);

    const noAuth = await fetch(t.url + "/admin/tariff");
    assert.equal(noAuth.status, 401);
    await noAuth.body?.cancel();
  });
});

Deno.test("tariff: a POSTed rate charges the next request; earlier and in-flight requests keep theirs", async () => {
  await withGateway(async (t) => {
    const k = await t.newKey("10.00");
    const before = await post(t.url + "/v1/chat/completions", k.key, chat("Привет [[sim:words=5]]"));
    assert.equal(before.status, 200);
    await before.text();

    // A stream admitted before the change: its Reservation holds the old rates.
    const slow = await post(
      t.url + "/v1/chat/completions",
      k.key,
      chat("Долго [[sim:words=40]] [[sim:interval=15]]", { stream: true }),
    );
    assert.equal(slow.status, 200);
    const reader = slow.body!.getReader();
    await reader.read();

    const changed = await t.admin("POST", "/admin/tariff", {
      rows: [{
        model: "k3",
        input_usd_per_million: "4.123456",
        output_usd_per_million: "20.50",
        cache_read_usd_per_million: "0.41",
        member_discount: true,
      }],
    });
    assert.equal(changed.status, 200, JSON.stringify(changed.json));
    const changedAt = Date.now();
    const k3 = changed.json.data.filter((r: any) => r.model === "k3");
    assert.deepEqual(k3, [{
      model: "k3",
      input_usd_per_million: "4.123456",
      output_usd_per_million: "20.50",
      cache_read_usd_per_million: "0.41",
      above_input_tokens: null,
      search: null,
      member_discount: true,
    }]);
    // Other models are untouched, and GET agrees with the POST's answer.
    assert.deepEqual((await t.admin("GET", "/admin/tariff")).json, changed.json);
    assert.deepEqual(
      changed.json.data.filter((r: any) => r.model === "k3-256k").map(asTuple),
      [row(ALPHA[1])],
    );

    while (!(await reader.read()).done) { /* drain the in-flight stream */ }

    const after = await post(
      t.url + "/v1/chat/completions",
      k.key,
      chat("Снова [[sim:words=5]] [[sim:cached=4]]"),
    );
    assert.equal(after.status, 200);
    await after.text();

    const [newest, inFlight, oldest] = await usageRows(t, k.id);
    assert.ok(newest && inFlight && oldest);
    assert.equal(newest.cachedInputTokens, 4);
    expectCharged(newest, "4.123456", "0.41", "20.50");
    assert.ok(inFlight.createdAt >= changedAt, "the stream settled after the change");
    expectCharged(inFlight, "3.00", "0.30", "15.00");
    expectCharged(oldest, "3.00", "0.30", "15.00");

    // The usage API reports the same rates per request.
    const res = await fetch(t.url + "/v1/usage/requests", { headers: { authorization: `Bearer ${k.key}` } });
    const listed = (await res.json()).data as any[];
    assert.deepEqual(listed.map((r) => r.rates_usd_per_million.input), ["4.123456", "3.00", "3.00"]);
    assert.equal(parseUsd(listed[0].charged_usd), newest.charged);
  });
});

Deno.test("tariff: replacing a model's rows drops its old tiers; the others keep theirs", async () => {
  await withGateway(async (t) => {
    const res = await t.admin("POST", "/admin/tariff", {
      rows: [
        { model: "theta3.7-plus", input_usd_per_million: "0.45", output_usd_per_million: "1.70" },
        {
          model: "theta3.6-plus",
          input_usd_per_million: "0.55",
          output_usd_per_million: "3.30",
          search: { usd: "0.02", per: "request" },
        },
        {
          model: "theta3.6-plus",
          above_input_tokens: 128_000,
          input_usd_per_million: "1.00",
          output_usd_per_million: "4.00",
        },
      ],
    });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    const of = (m: string) => res.json.data.filter((r: any) => r.model === m).map(asTuple);
    assert.deepEqual(of("theta3.7-plus"), [["theta3.7-plus", null, "0.45", null, "1.70"]]);
    assert.deepEqual(of("theta3.6-plus"), [
      ["theta3.6-plus", null, "0.55", null, "3.30"],
      ["theta3.6-plus", 128_000, "1.00", null, "4.00"],
    ]);
    assert.deepEqual(of("theta3.5-plus"), THETA.filter((r) => r[0] === "theta3.5-plus").map(row));
    const live = t.gw.app.tariff;
    assert.equal(live.rates("theta3.7-plus", 300_000)?.input, perToken("0.45"));
    assert.equal(live.rates("theta3.6-plus", 128_001)?.output, perToken("4.00"));
    assert.equal(live.rates("theta3.6-plus", 128_000)?.search, parseUsd("0.02"));
  });
});

Deno.test("tariff: invalid rows are refused with 400 invalid_request and a param; nothing changes", async () => {
  await withGateway(async (t) => {
    const initial = (await t.admin("GET", "/admin/tariff")).json;
    const live = t.gw.app.tariff;
    const base = { model: "k3", input_usd_per_million: "3.00", output_usd_per_million: "15.00" };
    const cases: [unknown, string][] = [
      [{ rows: [{ ...base, input_usd_per_million: "3.0000001" }] }, "rows.0.input_usd_per_million"],
      [
        { rows: [base, { ...base, model: "k3-256k", output_usd_per_million: "0.1234567" }] },
        "rows.1.output_usd_per_million",
      ],
      [{ rows: [{ ...base, cache_read_usd_per_million: "0.0000001" }] }, "rows.0.cache_read_usd_per_million"],
      [{ rows: [{ ...base, model: "gpt-9" }] }, "rows.0.model"],
      [{
        rows: [{
          model: "theta3.7-plus",
          above_input_tokens: 256_000,
          input_usd_per_million: "1.20",
          output_usd_per_million: "4.80",
        }],
      }, "rows.0.above_input_tokens"],
      [{ rows: [base, { ...base, input_usd_per_million: "2.00" }] }, "rows.1.above_input_tokens"],
      [{ rows: [{ ...base, input_usd_per_million: 3 }] }, "rows.0.input_usd_per_million"],
      [{ rows: [{ ...base, search: { usd: "0.01", per: "token" } }] }, "rows.0.search.per"],
      [{ rows: [{ ...base, colour: "red" }] }, "rows.0"],
      [{ rows: [] }, "rows"],
      [{}, "rows"],
    ];
    for (const [body, param] of cases) {
      const res = await t.admin("POST", "/admin/tariff", body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.json.error.code, "invalid_request", JSON.stringify(res.json));
      assert.equal(res.json.error.param, param, JSON.stringify(res.json));
    }
    assert.deepEqual((await t.admin("GET", "/admin/tariff")).json, initial);
    assert.equal(t.gw.app.tariff, live);
  });
});

Deno.test("tariff: a change survives a restart on the same DATA_DIR", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tariff_" });
  const env = { DATABASE_URL: "", DATA_DIR: dir };
  try {
    await withGateway(async (t) => {
      assert.equal(t.gw.app.tariff.rates("theta3.8-max", 10)?.input, perToken("2.00"));
      const res = await t.admin("POST", "/admin/tariff", {
        rows: [{ model: "theta3.8-max", input_usd_per_million: "2.25", output_usd_per_million: "6.75" }],
      });
      assert.equal(res.status, 200, JSON.stringify(res.json));
    }, env);
    await withGateway(async (t) => {
      const data = (await t.admin("GET", "/admin/tariff")).json.data as any[];
      assert.deepEqual(
        data.filter((r) => r.model === "theta3.8-max").map(asTuple),
        [["theta3.8-max", null, "2.25", null, "6.75"]],
      );
      assert.deepEqual(data.filter((r) => r.model === "k3").map(asTuple), [row(ALPHA[0])]);
      const rates = t.gw.app.tariff.rates("theta3.8-max", 10);
      assert.equal(rates?.input, perToken("2.25"));
      assert.equal(rates?.output, perToken("6.75"));
    }, env);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
