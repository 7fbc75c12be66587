/** Billing invariants against a running gateway: caps, concurrency with faults, ledger identity. */
import assert from "node:assert/strict";
import { parseUsd } from "../../src/money/usd.ts";
import { post, startTestGateway, type TestGateway } from "../support/harness.ts";

/** initial + top-ups = balance + open holds + settled spend, exactly. */
async function assertLedgerIdentity(t: TestGateway, id: string) {
  const { json } = await t.admin("GET", `/admin/keys/${id}`);
  assert.equal(
    parseUsd(json.credited_usd),
    parseUsd(json.balance_usd.replace(/^-/, "")) * (json.balance_usd.startsWith("-") ? -1n : 1n) +
      parseUsd(json.held_usd) + parseUsd(json.spent_usd),
    JSON.stringify(json),
  );
  return json;
}

const chat = (model: string, text: string, extra: Record<string, unknown> = {}) => ({
  model,
  max_tokens: 100,
  messages: [{ role: "user", content: text }],
  ...extra,
});

Deno.test("caps refuse in order with the family's code and Retry-After to the window end", async () => {
  const t = await startTestGateway();
  try {
    const k = await t.newKey("10.00");
    await t.admin("POST", `/admin/keys/${k.id}/caps`, {
      hourly_reserve_usd: "0.000001",
      daily_spend_usd: "0.000001",
    });
    const r1 = await post(t.url + "/v1/chat/completions", k.key, chat("k3", "x"));
    assert.equal(r1.status, 429);
    assert.equal((await r1.json()).error.code, "hourly_reserve_limit");
    const ra = Number(r1.headers.get("retry-after"));
    assert.ok(ra > 0 && ra <= 3600, String(ra));
    const r2 = await post(t.url + "/v1/responses", k.key, {
      model: "gamma-2.5",
      input: "x",
      max_output_tokens: 10,
    });
    assert.equal((await r2.json()).error.code, "delta_hourly_reserve_limit");
    await t.admin("POST", `/admin/keys/${k.id}/caps`, { hourly_reserve_usd: null });
    const r3 = await post(t.url + "/v1/chat/completions", k.key, chat("k3", "x"));
    assert.equal(r3.status, 429);
    assert.equal((await r3.json()).error.code, "daily_spend_limit");
    assert.ok(Number(r3.headers.get("retry-after")) <= 86_400);
    await t.admin("POST", `/admin/keys/${k.id}/caps`, { daily_spend_usd: null, hourly_spend_usd: "0.01" });
    const r4 = await post(t.url + "/v1/chat/completions", k.key, chat("k3", "x [[sim:words=3]]"));
    assert.equal(r4.status, 200);
    await r4.body?.cancel();
    const json = await assertLedgerIdentity(t, k.id);
    assert.equal(json.held_usd, "0.00");
  } finally {
    await t.close();
  }
});

Deno.test("200 concurrent mixed requests on a thin balance: never negative, each settles once, identity holds", async () => {
  const t = await startTestGateway();
  try {
    const k = await t.newKey("0.05");
    const faults = [
      "",
      "",
      "",
      "[[sim:fault=error_mid]]",
      "[[sim:fault=cut_mid]]",
      "[[sim:fault=status:500]]",
      "[[sim:fault=no_usage]]",
    ];
    const results = await Promise.all(Array.from({ length: 200 }, async (_, i) => {
      const stream = i % 2 === 0;
      const model = i % 3 === 0 ? "theta3.7-plus" : "k3";
      const res = await post(
        t.url + "/v1/chat/completions",
        k.key,
        chat(model, `запрос ${i} [[sim:words=20]] ${faults[i % faults.length]}`, { stream }),
      );
      await res.text();
      return res.status;
    }));
    const counts = new Map<number, number>();
    for (const s of results) counts.set(s, (counts.get(s) ?? 0) + 1);
    // 502: a non-streaming answer cut mid-body is an invalid upstream response.
    for (const s of counts.keys()) assert.ok([200, 402, 502, 503].includes(s), `status ${s}`);
    assert.ok((counts.get(200) ?? 0) > 0, JSON.stringify([...counts]));
    assert.ok((counts.get(402) ?? 0) > 0, JSON.stringify([...counts]));
    await t.gw.app.accounts.committer.flush();
    const json = await assertLedgerIdentity(t, k.id);
    assert.equal(json.held_usd, "0.00");
    assert.ok(!json.balance_usd.startsWith("-"), json.balance_usd);
    // Every admitted request (not refused with 402) wrote exactly one usage row.
    const page = await t.gw.app.store.listUsage(k.id, { limit: 1000 });
    const admitted = results.filter((s) => s !== 402).length;
    assert.equal(page.rows.length, admitted);
    assert.equal(new Set(page.rows.map((r) => r.requestId)).size, admitted);
    const charged = page.rows.reduce((sum, r) => sum + r.charged, 0n);
    assert.equal(charged, parseUsd(json.spent_usd));
  } finally {
    await t.close();
  }
});

Deno.test("extracted document text counts as input in the reserve (§8.1 p.4)", async () => {
  const t = await startTestGateway();
  try {
    const k = await t.newKey("50.00");
    const form = new FormData();
    form.append("file", new File(["Строка документа. ".repeat(3_000)], "doc.txt", { type: "text/plain" }));
    const up = await fetch(t.url + "/v1/files", {
      method: "POST",
      headers: { authorization: `Bearer ${k.key}` },
      body: form,
    });
    const file = await up.json();
    assert.equal(up.status, 200, JSON.stringify(file));
    const ask = (content: unknown) =>
      post(t.url + "/v1/chat/completions", k.key, {
        model: "k3",
        max_tokens: 10,
        messages: [{ role: "user", content }],
      });
    const plain = await ask([{ type: "text", text: "Что в документе?" }]);
    await plain.body?.cancel();
    const withDoc = await ask([{ type: "text", text: "Что в документе?" }, {
      type: "input_file",
      file_id: file.id,
    }]);
    await withDoc.body?.cancel();
    assert.equal(withDoc.status, 200);
    const extra = parseUsd(withDoc.headers.get("x-gateway-hold-usd")!) -
      parseUsd(plain.headers.get("x-gateway-hold-usd")!);
    // 54,000 characters of text at 3 characters per token, at k3's 3.00 USD per 1M input tokens.
    assert.ok(extra >= parseUsd("0.054"), `document added only ${extra} pico-USD to the hold`);
    // The upstream received the text and reported it as input: the charge reflects it too.
    await t.gw.app.accounts.committer.flush();
    const rows = (await t.gw.app.store.listUsage(k.id, { limit: 10 })).rows;
    assert.ok(rows[0]!.inputTokens > 10_000, String(rows[0]!.inputTokens));
  } finally {
    await t.close();
  }
});
