/**
 * The usage report (§4.8) against a real gateway and simulator: rows per request newest first,
 * exact money identity (rows = summary = key's spent), cursor pagination, tamper-evident cursors,
 * the mode/parameter rules, the family and endpoint filters, the read rate limit, key isolation.
 */
import assert from "node:assert/strict";
import { parseUsd } from "../../src/money/usd.ts";
import { post, type TestGateway, withGateway } from "../support/harness.ts";

async function get(t: TestGateway, key: string | null, path: string) {
  const res = await fetch(t.url + path, key === null ? {} : { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, headers: res.headers, json: await res.json() as any };
}

/** One settled request; returns its request id. theta goes through /theta/v1. */
async function spend(t: TestGateway, key: string, model: string, i: number): Promise<string> {
  const path = model.startsWith("theta") ? "/theta/v1/chat/completions" : "/v1/chat/completions";
  const res = await post(t.url + path, key, {
    model,
    messages: [{ role: "user", content: `запрос ${i} [[sim:words=7]]` }],
  });
  assert.equal(res.status, 200, await res.clone().text());
  await res.text();
  return res.headers.get("request-id")!;
}

const sumUsd = (xs: string[]) => xs.reduce((s, x) => s + parseUsd(x), 0n);
const modelOf = (i: number) => i % 3 === 2 ? "theta3.7-plus" : "k3";

function assertDetailError(r: { status: number; json: any }, status: number, code: string, param?: string) {
  assert.equal(r.status, status, JSON.stringify(r.json));
  assert.equal(r.json.error, undefined, "usage errors live under detail.error only");
  assert.equal(r.json.detail.error.code, code);
  if (param !== undefined) assert.equal(r.json.detail.error.param, param);
  assert.ok(r.json.detail.error.message.endsWith(`[${code} · ${r.json.request_id}]`));
}

Deno.test("usage: rows per request newest first; rows = summary = spent_usd; filters; pagination", async () => {
  await withGateway(async (t) => {
    const a = await t.newKey("10.00");
    const N = 6;
    const ids: string[] = [];
    for (let i = 0; i < N; i++) ids.push(await spend(t, a.key, modelOf(i), i));
    const newestFirst = [...ids].reverse();

    const all = await get(t, a.key, "/v1/usage/requests?limit=100");
    assert.equal(all.status, 200);
    assert.equal(all.json.object, "list");
    assert.equal(all.json.has_more, false);
    assert.equal(all.json.next_cursor, null);
    const rows = all.json.data as any[];
    assert.deepEqual(rows.map((r) => r.request_id), newestFirst);
    for (let i = 1; i < rows.length; i++) assert.ok(rows[i - 1].created_at >= rows[i].created_at);
    for (const r of rows) {
      assert.equal(r.status, "ok");
      assert.equal(r.stream, false);
      assert.equal(r.family, r.model === "k3" ? "alpha" : "theta");
      assert.equal(r.endpoint, r.family === "theta" ? "/theta/v1/chat/completions" : "/v1/chat/completions");
      assert.ok(r.output_tokens > 0 && r.input_tokens > 0);
      assert.equal(parseUsd(r.released_usd), parseUsd(r.reserved_usd) - parseUsd(r.charged_usd));
      assert.ok(parseUsd(r.charged_usd) > 0n);
      assert.deepEqual(Object.keys(r.rates_usd_per_million), ["input", "cache_read", "output"]);
    }

    const summary = await get(t, a.key, "/v1/usage");
    assert.equal(summary.status, 200);
    assert.equal(summary.json.object, "list");
    const groups = summary.json.data as any[];
    assert.equal(groups.reduce((s, g) => s + g.requests, 0), N);
    assert.deepEqual(
      new Set(groups.map((g) => `${g.family}/${g.model}`)),
      new Set(["alpha/k3", "theta/theta3.7-plus"]),
    );
    for (const g of groups) assert.match(g.date, /^\d{4}-\d{2}-\d{2}$/);
    const spent = (await t.admin("GET", `/admin/keys/${a.id}`)).json.spent_usd;
    const charged = sumUsd(rows.map((r) => r.charged_usd));
    assert.equal(charged, parseUsd(summary.json.total_cost_usd));
    assert.equal(charged, sumUsd(groups.map((g) => g.cost_usd)));
    assert.equal(charged, parseUsd(spent));

    // limit=2 walks every row exactly once, in order.
    const walked: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`;
      const page = await get(t, a.key, `/v1/usage/requests?limit=2${q}`);
      assert.equal(page.status, 200, JSON.stringify(page.json));
      assert.ok(page.json.data.length <= 2);
      walked.push(...page.json.data.map((r: any) => r.request_id));
      assert.equal(page.json.has_more, page.json.next_cursor !== null);
      cursor = page.json.next_cursor;
      pages++;
    } while (cursor !== null);
    assert.deepEqual(walked, newestFirst);
    assert.equal(pages, N / 2);

    // Filters.
    const theta = await get(t, a.key, "/v1/usage/requests?family=theta");
    assert.deepEqual(
      theta.json.data.map((r: any) => r.request_id),
      newestFirst.filter((_, i) => (N - 1 - i) % 3 === 2),
    );
    const alphaSum = await get(t, a.key, "/v1/usage?family=alpha");
    assert.deepEqual(alphaSum.json.data.map((g: any) => [g.family, g.requests]), [["alpha", 4]]);
    const byEndpoint = await get(t, a.key, "/v1/usage/requests?endpoint=/theta/v1/chat/completions");
    assert.deepEqual(
      byEndpoint.json.data.map((r: any) => r.request_id),
      theta.json.data.map((r: any) => r.request_id),
    );
    const today = new Date().toISOString().slice(0, 10);
    const dated = await get(t, a.key, `/v1/usage?start=${today}&end=${today}`);
    assert.equal(dated.json.total_cost_usd, summary.json.total_cost_usd);
    const future = await get(t, a.key, "/v1/usage/requests?start=2999-01-01");
    assert.deepEqual([future.json.data, future.json.has_more], [[], false]);
  });
});

Deno.test("usage: a cursor is a position — newer rows do not shift the next page", async () => {
  await withGateway(async (t) => {
    const a = await t.newKey("10.00");
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await spend(t, a.key, "k3", i));
    const first = await get(t, a.key, "/v1/usage/requests?limit=2");
    assert.deepEqual(first.json.data.map((r: any) => r.request_id), [ids[3], ids[2]]);
    for (let i = 4; i < 7; i++) await spend(t, a.key, "k3", i);
    const second = await get(t, a.key, `/v1/usage/requests?limit=2&cursor=${first.json.next_cursor}`);
    assert.deepEqual(second.json.data.map((r: any) => r.request_id), [ids[1], ids[0]]);
    assert.equal(second.json.has_more, false);
  });
});

Deno.test("usage: tampered, foreign, re-filtered and malformed cursors are 400 invalid_cursor", async () => {
  await withGateway(async (t) => {
    const a = await t.newKey("10.00");
    const b = await t.newKey("10.00");
    for (let i = 0; i < 3; i++) await spend(t, a.key, "k3", i);
    const page = await get(t, a.key, "/v1/usage/requests?limit=1");
    const cursor: string = page.json.next_cursor;
    assert.equal(typeof cursor, "string");
    const at = Math.floor(cursor.length / 2);
    const flipped = cursor.slice(0, at) + (cursor[at] === "A" ? "B" : "A") + cursor.slice(at + 1);
    const enc = encodeURIComponent;
    for (
      const [key, query] of [
        [a.key, `cursor=${enc(flipped)}`],
        [a.key, `cursor=${enc(cursor.slice(0, -1) + (cursor.endsWith("A") ? "B" : "A"))}`],
        [a.key, `cursor=${enc(cursor)}&family=alpha`],
        [a.key, `cursor=${enc(cursor)}&endpoint=/v1/chat/completions`],
        [b.key, `cursor=${enc(cursor)}`],
        [a.key, "cursor=not-a-cursor"],
        [a.key, "cursor="],
        [a.key, `cursor=${enc(cursor + "." + cursor)}`],
      ] as const
    ) {
      assertDetailError(await get(t, key, `/v1/usage/requests?${query}`), 400, "invalid_cursor", "cursor");
    }
    const ok = await get(t, a.key, `/v1/usage/requests?limit=1&cursor=${enc(cursor)}`);
    assert.equal(ok.status, 200);
    assert.equal(ok.json.data.length, 1);
  });
});

Deno.test("usage: mode → 410, unknown or bad parameters → 422 with param, no key → 401", async () => {
  await withGateway(async (t) => {
    const cases: [string, number, string, string][] = [
      ["/v1/usage?mode=x", 410, "product_modes_removed", "mode"],
      ["/v1/usage/requests?mode=", 410, "product_modes_removed", "mode"],
      ["/v1/usage?family=alpha&mode=standard", 410, "product_modes_removed", "mode"],
      ["/v1/usage?foo=1", 422, "validation_error", "foo"],
      ["/v1/usage/requests?bar=", 422, "validation_error", "bar"],
      ["/v1/usage?limit=5", 422, "validation_error", "limit"],
      ["/v1/usage?cursor=abc", 422, "validation_error", "cursor"],
      ["/v1/usage?family=delta", 422, "validation_error", "family"],
      ["/v1/usage/requests?family=", 422, "validation_error", "family"],
      ["/v1/usage?family=alpha&family=beta", 422, "validation_error", "family"],
      ["/v1/usage?endpoint=chat", 422, "validation_error", "endpoint"],
      ["/v1/usage?start=2024-02-30", 422, "validation_error", "start"],
      ["/v1/usage?end=yesterday", 422, "validation_error", "end"],
      ["/v1/usage?start=2024-03-02&end=2024-03-01", 422, "validation_error", "end"],
      ["/v1/usage/requests?limit=0", 422, "validation_error", "limit"],
      ["/v1/usage/requests?limit=101", 422, "validation_error", "limit"],
      ["/v1/usage/requests?limit=abc", 422, "validation_error", "limit"],
    ];
    // Fresh keys now and then so the read rate limit never interferes.
    let key = "";
    for (const [i, [path, status, code, param]] of cases.entries()) {
      if (i % 10 === 0) key = (await t.newKey("1.00")).key;
      assertDetailError(await get(t, key, path), status, code, param);
    }
    const none = await get(t, null, "/v1/usage");
    assert.equal(none.status, 401);
    assert.equal(none.json.detail.error.code, "missing_api_key");
  });
});

Deno.test("usage: reads beyond the burst → 429 usage_rate_limit with Retry-After; other keys unaffected", async () => {
  await withGateway(async (t) => {
    const a = await t.newKey("1.00");
    const b = await t.newKey("1.00");
    const results = await Promise.all(Array.from({ length: 40 }, () => get(t, a.key, "/v1/usage")));
    const limited = results.filter((r) => r.status === 429);
    assert.ok(results.filter((r) => r.status === 200).length >= 20);
    assert.ok(limited.length > 0);
    for (const r of limited) {
      assertDetailError(r, 429, "usage_rate_limit");
      assert.ok(Number(r.headers.get("retry-after")) >= 1);
    }
    assert.equal((await get(t, b.key, "/v1/usage/requests")).status, 200);
  });
});

Deno.test("usage: another key sees none of these rows", async () => {
  await withGateway(async (t) => {
    const a = await t.newKey("10.00");
    const b = await t.newKey("10.00");
    for (let i = 0; i < 3; i++) await spend(t, a.key, modelOf(i), i);
    const sum = await get(t, b.key, "/v1/usage");
    assert.deepEqual(sum.json, { object: "list", data: [], total_cost_usd: "0.00" });
    const list = await get(t, b.key, "/v1/usage/requests");
    assert.deepEqual(list.json, { object: "list", data: [], has_more: false, next_cursor: null });
    assert.equal((await get(t, a.key, "/v1/usage/requests")).json.data.length, 3);
  });
});
