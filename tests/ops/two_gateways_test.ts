/**
 * Two gateways in one process share no state: each is built from its own config (src/gateway.ts) and
 * serves by it — theta's account queue (THETA_UPSTREAM_KEYS, THETA_IDLE_RELEASE_MS), gamma/eta's tool loops
 * (DELTA_MAX_OPEN_LOOPS), document extraction (FILES_EXTRACT_TIMEOUT_MS), the live tariff behind each admin
 * API — and closing them leaves nothing open (the test runs with Deno's op and resource sanitizers on).
 */
import assert from "node:assert/strict";
import { pdf } from "../fixtures/files/build.ts";
import { post, startTestGateway, type TestGateway } from "../support/harness.ts";
import { upload } from "../support/uploads.ts";

const theta = (text: string) => ({
  model: "theta3.8-omni-flash",
  max_tokens: 50,
  messages: [{ role: "user", content: text }],
});
const TOOLS = [{
  type: "function",
  function: { name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } } } },
}];
const gammaWithTools = (text: string) => ({
  model: "gamma-2.5",
  max_tokens: 100,
  tools: TOOLS,
  messages: [{ role: "user", content: text }],
});

async function chat(t: TestGateway, key: string, body: unknown) {
  const res = await post(t.url + "/v1/chat/completions", key, body);
  return { status: res.status, json: await res.json() };
}

Deno.test("two gateways in one process: each by its own config, nothing shared, nothing left open", async () => {
  // A: one theta account held by its key for long after a request, one open tool loop per key.
  const a = await startTestGateway({
    THETA_UPSTREAM_KEYS: "up-a-1",
    THETA_IDLE_RELEASE_MS: "600000",
    THETA_QUEUE_TIMEOUT_MS: "200",
    DELTA_MAX_OPEN_LOOPS: "1",
    FILES_EXTRACT_TIMEOUT_MS: "50",
  });
  // B: three theta accounts, two open loops per key.
  const b = await startTestGateway({
    THETA_UPSTREAM_KEYS: "up-b-1,up-b-2,up-b-3",
    THETA_QUEUE_TIMEOUT_MS: "200",
    DELTA_MAX_OPEN_LOOPS: "2",
  });
  try {
    // Each gateway's families are its own objects.
    assert.notEqual(a.gw.app.families, b.gw.app.families);
    assert.notEqual(a.gw.app.families.theta, b.gw.app.families.theta);
    assert.notEqual(a.gw.app.families.gamma, b.gw.app.families.gamma);
    assert.equal(a.gw.app.upstreams.theta?.keys.length, 1);
    assert.equal(b.gw.app.upstreams.theta?.keys.length, 3);

    // Theta: on A the first key keeps the one account (idle release 10 min), so a second key waits and times
    // out; on B the second key gets an account of its own.
    for (const [t, second] of [[a, 429], [b, 200]] as const) {
      const k1 = await t.newKey("5.00");
      const k2 = await t.newKey("5.00");
      const first = await chat(t, k1.key, theta("Привет"));
      assert.equal(first.status, 200, JSON.stringify(first.json));
      const other = await chat(t, k2.key, theta("Привет"));
      assert.equal(other.status, second, JSON.stringify(other.json));
      if (second === 429) assert.equal(other.json.error.code, "queue_timeout");
    }

    // Tool loops: one open loop is A's limit for a key, not B's.
    for (const [t, second] of [[a, 429], [b, 200]] as const) {
      const k = await t.newKey("5.00");
      const opened = await chat(t, k.key, gammaWithTools("Погода? [[sim:tool]]"));
      assert.equal(opened.status, 200, JSON.stringify(opened.json));
      assert.equal(opened.json.choices[0].finish_reason, "tool_calls");
      const next = await chat(t, k.key, gammaWithTools("Ещё? [[sim:tool]]"));
      assert.equal(next.status, second, JSON.stringify(next.json));
      if (second === 429) assert.equal(next.json.error.code, "delta_key_pause_limit");
    }

    // Document extraction: A's pool stops a long PDF at 50 ms, B's (the default 30 s) extracts it.
    assert.notEqual(a.gw.app.documents, b.gw.app.documents);
    const long = await pdf(Array.from({ length: 200 }, (_, i) => `p${i}`));
    for (const [t, status] of [[a, 422], [b, 200]] as const) {
      const k = await t.newKey("5.00");
      const r = await upload(t, k.key, "long.pdf", long);
      assert.equal(r.status, status, JSON.stringify(r.json));
      if (status === 422) assert.match(r.json.detail.error.message, /длилось дольше 50 мс/);
    }

    // The tariff changed through A's admin API is A's alone (each has its own store).
    const before = (await b.admin("GET", "/admin/tariff")).json;
    const changed = await a.admin("POST", "/admin/tariff", {
      rows: [{
        model: "k3",
        input_usd_per_million: "4.123456",
        output_usd_per_million: "20.50",
        cache_read_usd_per_million: "0.41",
        member_discount: true,
      }],
    });
    assert.equal(changed.status, 200, JSON.stringify(changed.json));
    assert.notDeepEqual((await a.admin("GET", "/admin/tariff")).json, before);
    assert.deepEqual((await b.admin("GET", "/admin/tariff")).json, before);
    assert.notEqual(a.gw.app.tariff, b.gw.app.tariff);

    // Both answer readiness on their own store.
    for (const t of [a, b]) assert.equal((await fetch(t.url + "/readyz").then((r) => r.json())).ready, true);
  } finally {
    await a.close();
    await b.close();
  }
});
