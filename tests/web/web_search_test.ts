/** POST /v1/alpha/search through a real gateway (§2.4, §4.4, §8.3) with the simulator as SearXNG. */
import assert from "node:assert/strict";
import { type Simulator, startSimulator } from "../../sim/server.ts";
import { parseConfig } from "../../src/config/env.ts";
import { startGateway } from "../../src/gateway.ts";
import { ADMIN_TOKEN, post, startTestGateway, type TestGateway } from "../support/harness.ts";

async function withSearch(
  fn: (t: TestGateway, sim: Simulator) => Promise<void>,
  env: Record<string, string> = {},
) {
  const sim = await startSimulator();
  const t = await startTestGateway({ SEARCH_UPSTREAM_URL: sim.url, ...env });
  try {
    await fn(t, sim);
  } finally {
    await t.close();
    await sim.close();
  }
}

const search = (t: TestGateway, key: string | null, body: unknown) =>
  post(t.url + "/v1/alpha/search", key, body);

Deno.test("search: results filtered to usable urls, ≤ 20, optional fields only when valid", () =>
  withSearch(async (t, sim) => {
    const { key } = await t.newKey("1.00");
    const res = await search(t, key, { query: "кот" });
    assert.equal(res.status, 200);
    assert.ok(res.headers.get("request-id"));
    const body = await res.json();
    assert.equal(body.object, "list");
    assert.equal(body.data.length, 20); // 25 found, 4 without a usable url, capped at 20
    for (const item of body.data) {
      assert.match(item.url, /^https:\/\/example\.com\/sim\/\d+\?q=/);
      for (const k of Object.keys(item)) {
        assert.ok(["url", "title", "snippet", "date", "site_name"].includes(k));
      }
    }
    const byIndex = new Map(body.data.map((d: any) => [Number(/sim\/(\d+)/.exec(d.url)![1]), d]));
    for (const dropped of [1, 3, 5, 11]) assert.equal(byIndex.has(dropped), false);
    assert.deepEqual(byIndex.get(0), {
      url: "https://example.com/sim/0?q=%D0%BA%D0%BE%D1%82",
      title: "Результат 0: кот",
      snippet: "Фрагмент 0 по запросу «кот».",
      date: "2025-01-01T00:00:00",
    });
    const seven: any = byIndex.get(7);
    assert.equal("title" in seven, false, "over-long title is omitted, the item stays");
    assert.ok(seven.snippet);
    assert.equal("date" in seven, false, "null date is omitted");
    assert.equal((byIndex.get(9) as any).snippet, "жирный & курсив");
    const rec = sim.requests.at(-1)!;
    assert.equal(rec.path, "/search");
    assert.equal(new URLSearchParams(rec.body as string).get("q"), "кот");
    assert.equal(new URLSearchParams(rec.body as string).get("format"), "json");
  }));

Deno.test("search: free of charge; 402 insufficient_credit at zero credit; 401 without key", () =>
  withSearch(async (t) => {
    const { id, key } = await t.newKey("0.50");
    assert.equal((await search(t, key, { query: "a" })).status, 200);
    assert.equal((await t.admin("GET", `/admin/keys/${id}`)).json.balance_usd, "0.50");
    const zero = await t.newKey("0.00");
    const res = await search(t, zero.key, { query: "a" });
    assert.equal(res.status, 402);
    assert.equal((await res.json()).error.code, "insufficient_credit");
    const anon = await search(t, null, { query: "a" });
    assert.equal(anon.status, 401);
    await anon.body?.cancel();
  }));

Deno.test("search: bad bodies → 400 invalid_managed_service_request", () =>
  withSearch(async (t) => {
    const { key } = await t.newKey("1.00");
    const cases: [string, unknown, string | null][] = [
      ["broken JSON", "{query:", null],
      ["empty body", "", null],
      ["array", "[]", null],
      ["string", '"кот"', null],
      ["null", "null", null],
      ["empty object", {}, "query"],
      ["wrong field name", { q: "кот" }, "q"],
      ["extra field", { query: "кот", lang: "ru" }, "lang"],
      ["model field", { query: "кот", model: "k3" }, "model"],
      ["stream field", { query: "кот", stream: true }, "stream"],
      ["query number", { query: 42 }, "query"],
      ["query null", { query: null }, "query"],
      ["query array", { query: ["кот"] }, "query"],
      ["query empty", { query: "" }, "query"],
      ["query only spaces", { query: " \t\n " }, "query"],
      ["query 4097 chars", { query: "a".repeat(4097) }, "query"],
      ["query 4097 emoji", { query: "😀".repeat(4097) }, "query"],
    ];
    for (const [name, body, param] of cases) {
      const res = await search(t, key, body);
      const json = await res.json();
      assert.equal(res.status, 400, name);
      assert.equal(json.error.code, "invalid_managed_service_request", name);
      assert.equal(json.error.param, param, name);
    }
    for (const ok of ["a".repeat(4096), "😀".repeat(4096), "я".repeat(4096)]) {
      const res = await search(t, key, { query: ok });
      assert.equal(res.status, 200, `${ok.length} units`);
      await res.body?.cancel();
    }
    const get = await fetch(t.url + "/v1/alpha/search", { headers: { authorization: `Bearer ${key}` } });
    assert.equal(get.status, 405);
    await get.body?.cancel();
  }));

Deno.test("search: upstream failures map to 503 / 502", () =>
  withSearch(async (t) => {
    const { key } = await t.newKey("1.00");
    const down = await search(t, key, { query: "sim:status=500" });
    assert.equal(down.status, 503);
    assert.equal((await down.json()).error.code, "upstream_unavailable");
    const garbage = await search(t, key, { query: "sim:garbage" });
    assert.equal(garbage.status, 502);
    assert.equal((await garbage.json()).error.code, "upstream_invalid_response");
    const empty = await search(t, key, { query: "sim:empty" });
    assert.deepEqual(await empty.json(), { object: "list", data: [] });
  }));

Deno.test("search: Brave Search adapter (SEARCH_BACKEND=brave)", async () => {
  const seen: { path: string; token: string | null; q: string | null }[] = [];
  const brave = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const u = new URL(req.url);
    seen.push({
      path: u.pathname,
      token: req.headers.get("x-subscription-token"),
      q: u.searchParams.get("q"),
    });
    return Response.json({
      type: "search",
      web: {
        type: "search",
        results: [
          {
            url: "https://brave.example.org/a",
            title: "A <strong>title</strong>",
            description: "Desc &quot;q&quot;",
            page_age: "2024-05-01T10:00:00",
            profile: { name: "Brave Example" },
          },
          { url: "mailto:x@example.org", title: "dropped" },
          { url: "https://brave.example.org/b", title: "", description: "x".repeat(5000) },
        ],
      },
    });
  });
  const port = (brave.addr as Deno.NetAddr).port;
  const t = await startTestGateway({
    SEARCH_UPSTREAM_URL: `http://127.0.0.1:${port}`,
    SEARCH_UPSTREAM_KEY: "brave-key",
    SEARCH_BACKEND: "brave",
  });
  try {
    const { key } = await t.newKey("1.00");
    const res = await search(t, key, { query: "deno" });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {
      object: "list",
      data: [
        {
          url: "https://brave.example.org/a",
          title: "A title",
          snippet: 'Desc "q"',
          date: "2024-05-01T10:00:00",
          site_name: "Brave Example",
        },
        { url: "https://brave.example.org/b" },
      ],
    });
    assert.deepEqual(seen, [{ path: "/res/v1/web/search", token: "brave-key", q: "deno" }]);
  } finally {
    await t.close();
    await brave.shutdown();
  }
});

Deno.test("search: demo mode answers from the built-in simulator; unset URL outside demo → 503", async () => {
  const gw = await startGateway(
    parseConfig({ PORT: "0", HOST: "127.0.0.1", DATABASE_URL: "memory", LOG_LEVEL: "error", ADMIN_TOKEN }),
    { simulator: await startSimulator({ hostname: "127.0.0.1" }) },
  );
  try {
    const created = await fetch(gw.url + "/admin/keys", {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ balance_usd: "1.00" }),
    });
    const { key } = await created.json();
    const res = await post(gw.url + "/v1/alpha/search", key, { query: "демо" });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("x-gateway-simulated"), "true");
    assert.equal((await res.json()).data.length, 20);
  } finally {
    await gw.close();
  }
  await withSearch(async (t) => {
    const { key } = await t.newKey("1.00");
    const res = await search(t, key, { query: "x" });
    assert.equal(res.status, 503);
    assert.equal((await res.json()).error.code, "service_unavailable");
  }, { SEARCH_UPSTREAM_URL: "" });
});
