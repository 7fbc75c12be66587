/**
 * Operating the gateway (issue 17 item 5): /healthz and /readyz without a key (ready; not ready while
 * draining, with the store failing or hanging, with no upstream), and /metrics behind the admin token, read
 * with a strict exposition reader, moving as requests are served.
 */
import assert from "node:assert/strict";
import type { Store } from "../../src/store/store.ts";
import { ADMIN_TOKEN, post, type TestGateway, withGateway } from "../support/harness.ts";
import { type Exposition, parseExposition } from "../support/prometheus_text.ts";

const CHAT = "/v1/chat/completions";
const chat = (text: string, extra: Record<string, unknown> = {}) => ({
  model: "k3",
  max_tokens: 50,
  messages: [{ role: "user", content: text }],
  ...extra,
});

async function scrape(t: TestGateway, token: string | null = ADMIN_TOKEN): Promise<Response> {
  return await fetch(
    t.url + "/metrics",
    token === null ? {} : { headers: { authorization: `Bearer ${token}` } },
  );
}

async function metrics(t: TestGateway): Promise<Exposition> {
  const res = await scrape(t);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  return parseExposition(await res.text());
}

/** Polls until `ok` holds for a scrape (settlement and group commit finish just after the answer). */
async function metricsUntil(t: TestGateway, ok: (e: Exposition) => boolean): Promise<Exposition> {
  for (let i = 0; i < 200; i++) {
    const e = await metrics(t);
    if (ok(e)) return e;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("metrics never reached the expected state");
}

const n = (v: number | undefined) => v ?? 0;

Deno.test("/healthz answers 200 without a key; /readyz is ready with the store up and upstreams configured", async () => {
  await withGateway(async (t) => {
    const health = await fetch(t.url + "/healthz");
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { status: "ok" });
    const ready = await fetch(t.url + "/readyz");
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), {
      ready: true,
      failing: [],
      checks: { store: "ok", settlements: "ok", upstreams: "ok", draining: false },
    });
    const head = await fetch(t.url + "/readyz", { method: "HEAD" });
    assert.equal(head.status, 200);
    await head.body?.cancel();
  });
});

Deno.test("/readyz is 503 naming what is not ready: draining, the store failing or hanging, no upstream", async () => {
  await withGateway(async (t) => {
    const app = t.gw.app;
    const readyz = async () => {
      const res = await fetch(t.url + "/readyz");
      return { status: res.status, json: await res.json() };
    };
    app.draining = true;
    assert.deepEqual(await readyz(), {
      status: 503,
      json: {
        ready: false,
        failing: ["draining"],
        checks: { store: "ok", settlements: "ok", upstreams: "ok", draining: true },
      },
    });
    app.draining = false;

    const store = app.store as Store & { getKey: Store["getKey"] };
    const getKey = store.getKey;
    try {
      store.getKey = () => Promise.reject(new Error("store down"));
      assert.deepEqual(await readyz(), {
        status: 503,
        json: {
          ready: false,
          failing: ["store"],
          checks: { store: "error", settlements: "ok", upstreams: "ok", draining: false },
        },
      });
      store.getKey = () => new Promise(() => {}); // never answers: the probe gives up after its timeout
      assert.deepEqual(await readyz(), {
        status: 503,
        json: {
          ready: false,
          failing: ["store"],
          checks: { store: "timeout", settlements: "ok", upstreams: "ok", draining: false },
        },
      });
    } finally {
      store.getKey = getKey;
    }

    const upstreams = app.upstreams;
    app.upstreams = {};
    try {
      assert.deepEqual((await readyz()).json.failing, ["upstreams"]);
    } finally {
      app.upstreams = upstreams;
    }
    assert.equal((await readyz()).status, 200);
    // Probes are not API requests: never counted.
    const e = await metrics(t);
    assert.ok(!e.samples.some((s) => s.name === "gateway_requests_total" && s.labels.surface !== "admin"));
  });
});

Deno.test('/readyz is 503 "settlements" while a settlement waits longer than SETTLE_DURABILITY_MS to be durable', async () => {
  await withGateway(async (t) => {
    const store = t.gw.app.store as Store & { commit: Store["commit"] };
    const commit = store.commit;
    const gate = Promise.withResolvers<void>();
    store.commit = (batch) => gate.promise.then(() => commit.call(store, batch)); // the store stalls
    try {
      const key = await t.newKey("1.00");
      const res = await post(`${t.url}/v1/chat/completions`, key.key, {
        model: "k3",
        messages: [{ role: "user", content: "привет [[sim:words=3]]" }],
      });
      assert.equal(res.status, 200);
      await res.text();
      await new Promise((r) => setTimeout(r, 80)); // past the 50 ms window
      const lagging = await fetch(t.url + "/readyz");
      assert.equal(lagging.status, 503);
      assert.deepEqual((await lagging.json()).failing, ["settlements"]);
    } finally {
      gate.resolve();
      store.commit = commit;
    }
    await t.gw.app.accounts.ledger.flush();
    const ready = await fetch(t.url + "/readyz");
    assert.equal(ready.status, 200);
    assert.equal((await ready.json()).checks.settlements, "ok");
  }, { SETTLE_DURABILITY_MS: "50" });
});

Deno.test("/metrics needs the admin token: 401 without it, with a wrong one, or when none is configured", async () => {
  await withGateway(async (t) => {
    for (const token of [null, "wrong-token-0123456789", "gd-not-an-admin-token"]) {
      const res = await scrape(t, token);
      assert.equal(res.status, 401);
      assert.equal((await res.json()).error.code, "admin_unauthorized");
    }
    const { key } = await t.newKey();
    const res = await scrape(t, key);
    assert.equal(res.status, 401);
    await res.body?.cancel();
  });
  await withGateway(async (t) => {
    const res = await scrape(t);
    assert.equal(res.status, 401);
    await res.body?.cancel();
  }, { ADMIN_TOKEN: "" });
});

Deno.test("/metrics parses as exposition text and moves as requests are served", async () => {
  await withGateway(async (t) => {
    const { key } = await t.newKey("5.00");
    const before = await metrics(t);
    for (
      const name of [
        "gateway_requests_total",
        "gateway_request_duration_seconds",
        "gateway_upstream_ttfb_seconds",
        "gateway_added_latency_seconds",
        "gateway_upstream_errors_total",
        "gateway_rate_limited_total",
        "gateway_settlements_total",
      ]
    ) assert.equal(before.types.has(name), true, name);
    assert.equal(before.types.get("gateway_theta_queue_wait_seconds"), "histogram");
    assert.equal(before.get("gateway_theta_queue_wait_seconds_count"), 0);
    assert.equal(before.get("gateway_open_streams"), 0);
    assert.equal(before.get("gateway_held_usd"), 0);

    // A JSON answer: counted by family, surface and status, with its durations and settlement.
    const ok = await post(t.url + CHAT, key, chat("Привет [[sim:words=4]]"));
    assert.equal(ok.status, 200);
    await ok.json();
    const after = await metricsUntil(t, (e) => n(e.get("gateway_group_commit_batch_rows_sum")) >= 1);
    const ref = { family: "alpha", surface: "openai_chat" };
    assert.equal(after.get("gateway_requests_total", { ...ref, status: "200" }), 1);
    assert.equal(after.get("gateway_request_duration_seconds_count", ref), 1);
    assert.equal(after.get("gateway_added_latency_seconds_count", ref), 1);
    assert.equal(after.get("gateway_upstream_ttfb_seconds_count", { family: "alpha" }), 1);
    assert.equal(after.get("gateway_settlements_total", { family: "alpha", status: "ok" }), 1);
    assert.ok(n(after.get("gateway_charged_usd_total", { family: "alpha" })) > 0);
    assert.ok(n(after.get("gateway_group_commit_batch_rows_count")) >= 1);
    assert.equal(after.get("gateway_upstream_inflight", { family: "alpha" }), 0);

    // A stream held open (the upstream stalls): an open stream, an upstream call in flight, credit held.
    const stream = await fetch(t.url + CHAT, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(chat("Привет [[sim:fault=stall]]", { stream: true })),
    });
    assert.equal(stream.status, 200);
    const reader = stream.body!.getReader();
    await reader.read();
    const open = await metrics(t);
    assert.equal(open.get("gateway_open_streams"), 1);
    assert.equal(open.get("gateway_upstream_inflight", { family: "alpha" }), 1);
    assert.equal(open.get("gateway_capacity_slots_busy"), 1);
    assert.equal(open.get("gateway_capacity_slots_max"), 1024);
    assert.ok(n(open.get("gateway_held_usd")) > 0);
    await reader.cancel();
    const closed = await metricsUntil(t, (e) => e.get("gateway_open_streams") === 0);
    assert.equal(closed.get("gateway_upstream_inflight", { family: "alpha" }), 0);
    assert.equal(closed.get("gateway_held_usd"), 0);
    assert.equal(closed.get("gateway_capacity_slots_busy"), 0);
    assert.equal(closed.get("gateway_requests_total", { ...ref, status: "200" }), 2);
    assert.equal(closed.get("gateway_settlements_total", { family: "alpha", status: "cancelled" }), 1);

    // An upstream 500: counted under its status and as an upstream error with the code the client got.
    const failed = await post(t.url + CHAT, key, chat("Привет [[sim:fault=status:500]]"));
    const code = (await failed.json()).error.code;
    const errs = await metrics(t);
    assert.equal(errs.get("gateway_requests_total", { ...ref, status: String(failed.status) }), 1);
    assert.equal(errs.get("gateway_upstream_errors_total", { family: "alpha", code }), 1);

    // A bad key: no family, no upstream error.
    const bad = await post(t.url + CHAT, "gd-0000000000000000000000000000000000000000", chat("x"));
    assert.equal(bad.status, 401);
    await bad.body?.cancel();
    const last = await metrics(t);
    assert.equal(
      last.get("gateway_requests_total", { family: "none", surface: "openai_chat", status: "401" }),
      1,
    );
    assert.equal(
      last.samples.filter((s) => s.name === "gateway_upstream_errors_total").reduce((a, s) => a + s.value, 0),
      1,
    );
  });
});

Deno.test("/metrics counts the gateway's own rate-limit refusals by scope", async () => {
  await withGateway(async (t) => {
    const { key } = await t.newKey();
    const first = await fetch(t.url + "/v1/models", { headers: { authorization: `Bearer ${key}` } });
    assert.equal(first.status, 200);
    await first.body?.cancel();
    const second = await fetch(t.url + "/v1/models", { headers: { authorization: `Bearer ${key}` } });
    assert.equal(second.status, 429);
    assert.equal((await second.json()).error.code, "client_key_rate_limit");
    const e = await metrics(t);
    assert.equal(e.get("gateway_rate_limited_total", { scope: "key" }), 1);
    assert.equal(e.get("gateway_requests_total", { family: "none", surface: "models", status: "429" }), 1);
    assert.equal(e.get("gateway_requests_total", { family: "none", surface: "models", status: "200" }), 1);
  }, { KEY_RATE_LIMIT_RPS: "0.001", KEY_RATE_LIMIT_BURST: "1" });
});
