/**
 * The metrics the alert rules of deploy/prometheus/alerts.yml watch beyond the request counters: money written
 * off, refusals for want of capacity, and the age of the oldest ledger change not yet durable.
 */
import assert from "node:assert/strict";
import type { Store } from "../../src/store/store.ts";
import { ADMIN_TOKEN, post, type TestGateway, withGateway } from "../support/harness.ts";
import { type Exposition, parseExposition } from "../support/prometheus_text.ts";
import { fixedUpstream } from "../support/upstream_stubs.ts";

const CHAT = "/v1/chat/completions";
const chat = (text: string, extra: Record<string, unknown> = {}) => ({
  model: "k3",
  max_tokens: 10,
  messages: [{ role: "user", content: text }],
  ...extra,
});

async function metrics(t: TestGateway): Promise<Exposition> {
  const res = await fetch(t.url + "/metrics", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  assert.equal(res.status, 200);
  return parseExposition(await res.text());
}

Deno.test("gateway_written_off_usd_total counts the usage priced beyond the hold and the free balance", async () => {
  // An upstream that bills ten million prompt tokens for any request: 30.000015 USD at k3's rate.
  const up = fixedUpstream(() =>
    Response.json({
      id: "c",
      object: "chat.completion",
      created: 1,
      model: "k3",
      choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 10_000_000, completion_tokens: 1, total_tokens: 10_000_001 },
    })
  );
  try {
    await withGateway(async (t) => {
      const before = await metrics(t);
      assert.equal(before.types.get("gateway_written_off_usd_total"), "counter");
      assert.equal(before.samples.filter((s) => s.name === "gateway_written_off_usd_total").length, 0);
      const { key } = await t.newKey("0.01");
      const res = await post(t.url + CHAT, key, chat("hi"));
      assert.equal(res.status, 200);
      await res.body?.cancel();
      await t.gw.app.accounts.ledger.flush();
      const after = await metrics(t);
      // Charged 0.01 (the whole balance); the rest of 30.000015 is written off.
      assert.equal(after.get("gateway_charged_usd_total", { family: "alpha" }), 0.01);
      assert.equal(after.get("gateway_written_off_usd_total", { family: "alpha" }), 29.990015);
    }, { ALPHA_UPSTREAM_URL: up.url });
  } finally {
    await up.close();
  }
});

Deno.test("gateway_capacity_refused_total counts refusals for want of a capacity slot, by code", async () => {
  await withGateway(async (t) => {
    const before = await metrics(t);
    for (const code of ["service_capacity_saturated", "standard_capacity_saturated", "queue_timeout"]) {
      assert.equal(before.get("gateway_capacity_refused_total", { code }), 0, code);
    }
    const { key } = await t.newKey("5.00");
    // The one slot held by a stream whose upstream stalls.
    const stream = await fetch(t.url + CHAT, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(chat("Привет [[sim:fault=stall]]", { stream: true })),
    });
    assert.equal(stream.status, 200);
    const reader = stream.body!.getReader();
    await reader.read();
    try {
      const refused = await post(t.url + CHAT, key, chat("Привет"));
      assert.equal(refused.status, 429);
      assert.equal((await refused.json()).error.code, "service_capacity_saturated");
      const e = await metrics(t);
      assert.equal(e.get("gateway_capacity_refused_total", { code: "service_capacity_saturated" }), 1);
      assert.equal(e.get("gateway_capacity_refused_total", { code: "standard_capacity_saturated" }), 0);
      assert.equal(e.get("gateway_capacity_slots_busy"), 1);
      assert.equal(e.get("gateway_capacity_slots_max"), 1);
      // A refusal before any upstream call is not the upstream's error.
      assert.equal(e.samples.filter((s) => s.name === "gateway_upstream_errors_total").length, 0);
    } finally {
      await reader.cancel();
    }
  }, { MAX_INFLIGHT_UPSTREAM: "1", PRIORITY_SLOT_SHARE: "0" });
});

Deno.test("gateway_group_commit_pending_seconds is the age of the oldest change the store has not taken", async () => {
  await withGateway(async (t) => {
    const store = t.gw.app.store as Store & { commit: Store["commit"] };
    const commit = store.commit;
    const gate = Promise.withResolvers<void>();
    const { key } = await t.newKey("1.00");
    await t.gw.app.accounts.ledger.flush();
    assert.equal((await metrics(t)).get("gateway_group_commit_pending_seconds"), 0);
    store.commit = (batch) => gate.promise.then(() => commit.call(store, batch)); // the store stalls
    try {
      const res = await post(t.url + CHAT, key, chat("привет [[sim:words=3]]"));
      assert.equal(res.status, 200);
      await res.body?.cancel();
      await new Promise((r) => setTimeout(r, 120));
      const pending = (await metrics(t)).get("gateway_group_commit_pending_seconds")!;
      assert.ok(pending >= 0.1, `pending ${pending}`);
    } finally {
      gate.resolve();
      store.commit = commit;
    }
    await t.gw.app.accounts.ledger.flush();
    assert.equal((await metrics(t)).get("gateway_group_commit_pending_seconds"), 0);
  });
});
