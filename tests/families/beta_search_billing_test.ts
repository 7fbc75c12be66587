/**
 * Family beta's web-search fee through a running gateway (spec §8.1 p.6): 0.01 per provider-billed
 * search, held up front for the most searches the request can run (the tool's max_uses), charged for the
 * searches the provider reports, and shown on the usage row.
 */
import assert from "node:assert/strict";
import { formatUsd, parseUsd } from "../../src/money/usd.ts";
import { ANTHROPIC_HEADERS, post, withGateway } from "../support/harness.ts";
import { tokenCost, usageRows } from "../support/usage_rows.ts";

const SEARCH = (maxUses: number) => ({ type: "web_search_20250305", name: "web_search", max_uses: maxUses });
const CENT = parseUsd("0.01");

function messagesBody(maxUses: number | undefined, text: string) {
  return {
    model: "beta-haiku-4-5",
    max_tokens: 100,
    messages: [{ role: "user", content: text }],
    ...(maxUses === undefined ? {} : { tools: [SEARCH(maxUses)] }),
  };
}

Deno.test("beta: the hold covers max_uses searches; the charge is the reported searches × 0.01, on the row and the balance", () =>
  withGateway(async (t) => {
    const k = await t.newKey("10.00");
    const url = t.url + "/v1/messages";
    const hold = async (maxUses: number | undefined) => {
      const res = await post(url, k.key, messagesBody(maxUses, "погода [[sim:words=3]]"), ANTHROPIC_HEADERS);
      assert.equal(res.status, 200);
      await res.body?.cancel();
      return parseUsd(res.headers.get("x-gateway-hold-usd")!);
    };
    // Same estimate (one digit each), so the difference is the fee held for the extra searches.
    assert.equal((await hold(5)) - (await hold(1)), 4n * CENT);
    assert.equal((await hold(3)) - (await hold(1)), 2n * CENT);

    const before = parseUsd((await t.admin("GET", `/admin/keys/${k.id}`)).json.balance_usd);
    const res = await post(url, k.key, messagesBody(5, "новости [[sim:search=2]]"), ANTHROPIC_HEADERS);
    assert.equal(res.status, 200);
    const json = await res.json();
    assert.equal(json.usage.server_tool_use.web_search_requests, 2);
    const row = (await usageRows(t, k.key)).find((r) => r.request_id === res.headers.get("request-id"))!;
    assert.equal(row.web_search_requests, 2);
    assert.equal(row.web_search_fee_usd, "0.02");
    assert.equal(row.charged_usd, formatUsd(tokenCost(row) + 2n * CENT));
    assert.equal(row.written_off_usd, "0.00");
    const after = (await t.admin("GET", `/admin/keys/${k.id}`)).json;
    assert.equal(parseUsd(after.balance_usd), before - parseUsd(row.charged_usd));
    assert.equal(after.held_usd, "0.00");

    // Without searches there is no fee, whatever max_uses was held for.
    const plain = (await usageRows(t, k.key)).filter((r) => r.web_search_requests === 0);
    assert.ok(plain.length >= 4);
    for (const r of plain) {
      assert.equal(r.web_search_fee_usd, "0.00");
      assert.equal(r.charged_usd, formatUsd(tokenCost(r)));
    }
  }));

Deno.test("beta: a Responses client's hosted web_search holds five searches (the translation's max_uses)", () =>
  withGateway(async (t) => {
    const k = await t.newKey("10.00");
    const hold = async (tools: unknown[]) => {
      const body = { model: "beta-haiku-4-5", max_output_tokens: 100, input: "погода", tools };
      const res = await post(t.url + "/v1/responses", k.key, body);
      assert.equal(res.status, 200);
      await res.body?.cancel();
      return parseUsd(res.headers.get("x-gateway-hold-usd")!);
    };
    // `{"type":"web_search"}` against a function tool of no smaller estimate: the hold differs by more than 0.05.
    const withSearch = await hold([{ type: "web_search" }]);
    const without = await hold([]);
    assert.ok(withSearch - without >= 5n * CENT, `${formatUsd(withSearch)} vs ${formatUsd(without)}`);
    assert.ok(withSearch - without < 5n * CENT + CENT / 10n, "only the fee and a few tokens of the tool");
    const sent = t.sim.requests.at(-2)!.body as { tools: unknown[] };
    assert.deepEqual(sent.tools, [SEARCH(5)]);
  }));
