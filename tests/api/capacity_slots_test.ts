/**
 * Capacity slots through a running gateway (spec §7.3, docs/api.md "Errors"): MAX_INFLIGHT_UPSTREAM in-flight
 * upstream requests per process, ceil(max × PRIORITY_SLOT_SHARE) of them only for priority requests; refusals
 * are 429 with Retry-After: 1 before anything is held or sent; every slot comes back however a request ends.
 */
import assert from "node:assert/strict";
import { ANTHROPIC_HEADERS, post, type TestGateway, withGateway } from "../support/harness.ts";
import { SURFACE_PATH, surfaceBody } from "../support/sse_client.ts";

type Surface = "messages" | "chat" | "responses";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits (bounded) until every slot is free again; a settlement after a cancel is asynchronous. */
async function assertAllSlotsFree(t: TestGateway, where: string) {
  for (let i = 0; i < 100 && t.gw.app.slots.inflight !== 0; i++) await sleep(20);
  assert.equal(t.gw.app.slots.inflight, 0, `${where}: slots still held`);
}

/** A stream that stays open until the client cancels it (the simulator stalls after 3 deltas). */
async function openStall(t: TestGateway, key: string, model: string, surface: Surface, extra = {}) {
  const res = await send(t, key, model, surface, "держит слот [[sim:fault=stall]]", extra);
  assert.equal(res.status, 200, `${model} on ${surface}: ${res.status}`);
  return res;
}

function send(t: TestGateway, key: string, model: string, surface: Surface, text: string, extra = {}) {
  return post(
    t.url + SURFACE_PATH[surface],
    key,
    { ...surfaceBody(surface, model, text), ...extra },
    surface === "messages" ? ANTHROPIC_HEADERS : {},
  );
}

async function assertCapacityRefusal(res: Response, surface: Surface, code: string, where: string) {
  const json = await res.json();
  assert.equal(res.status, 429, `${where}: ${JSON.stringify(json)}`);
  assert.equal(res.headers.get("retry-after"), "1", where);
  assert.equal(res.headers.get("x-gateway-hold-usd"), null, `${where}: nothing held`);
  const requestId = res.headers.get("request-id")!;
  if (surface === "messages") assert.equal(json.type, "error", where);
  assert.deepEqual(
    Object.keys(json).sort(),
    surface === "messages" ? ["error", "request_id", "type"] : [
      "error",
      "request_id",
    ],
  );
  assert.equal(json.request_id, requestId, where);
  assert.equal(json.error.code, code, where);
  assert.equal(json.error.type, "rate_limit_error", where);
  assert.ok(json.error.message.endsWith(`[${code} · ${requestId}]`), where);
}

async function keyView(t: TestGateway, id: string) {
  return (await t.admin("GET", `/admin/keys/${id}`)).json;
}

async function usageRows(t: TestGateway, id: string) {
  await t.gw.app.accounts.committer.flush();
  return (await t.gw.app.store.listUsage(id, { limit: 100 })).rows;
}

Deno.test("capacity: standard traffic at its share gets standard_capacity_saturated, priority still enters, then service_capacity_saturated", () =>
  withGateway(async (t) => {
    assert.deepEqual([t.gw.app.slots.max, t.gw.app.slots.reserved], [4, 2]);
    const k = await t.newKey("10.00");
    const open = [await openStall(t, k.key, "k3", "chat"), await openStall(t, k.key, "k3", "responses")];
    assert.equal(t.gw.app.slots.inflight, 2);
    const sent = t.sim.requests.length;
    const held = (await keyView(t, k.id)).held_usd;

    for (const surface of ["chat", "responses", "messages"] as const) {
      const res = await send(t, k.key, "k3", surface, "стандартный");
      await assertCapacityRefusal(res, surface, "standard_capacity_saturated", `standard on ${surface}`);
    }
    // The client's priority tier (alpha accepts service_tier on Chat and Responses) takes the reserved slots.
    open.push(await openStall(t, k.key, "k3", "chat", { service_tier: "priority" }));
    open.push(await openStall(t, k.key, "k3", "responses", { service_tier: "priority" }));
    assert.equal(t.gw.app.slots.inflight, 4);
    for (
      const [surface, extra] of [["chat", { service_tier: "priority" }], ["chat", {}], [
        "messages",
        {},
      ]] as const
    ) {
      const res = await send(t, k.key, "k3", surface, "все заняты", extra);
      await assertCapacityRefusal(
        res,
        surface,
        "service_capacity_saturated",
        `${surface} ${JSON.stringify(extra)}`,
      );
    }
    // Refusals sent nothing upstream, held nothing, left no usage row.
    assert.equal(t.sim.requests.length, sent + 2);
    assert.notEqual((await keyView(t, k.id)).held_usd, held);
    for (const res of open) await res.body!.cancel();
    await assertAllSlotsFree(t, "after the streams were cancelled");
    const view = await keyView(t, k.id);
    assert.equal(view.held_usd, "0.00");
    assert.equal((await usageRows(t, k.id)).length, 4, "one row per admitted request, none for a refusal");
  }, { MAX_INFLIGHT_UPSTREAM: "4", PRIORITY_SLOT_SHARE: "0.5" }));

Deno.test("capacity: gamma/eta -fast ids are priority; service_tier on Messages is not a priority tier", () =>
  withGateway(async (t) => {
    const k = await t.newKey("10.00");
    const standard = await openStall(t, k.key, "k3", "chat");
    for (const [model, surface] of [["gamma-2.5", "responses"], ["delta-eta-4.6-low", "chat"]] as const) {
      const res = await send(t, k.key, model, surface, "стандартный");
      await assertCapacityRefusal(res, surface, "standard_capacity_saturated", model);
    }
    const res = await send(t, k.key, "k3", "messages", "не приоритет", { service_tier: "priority" });
    await assertCapacityRefusal(res, "messages", "standard_capacity_saturated", "service_tier on Messages");
    const fast = await openStall(t, k.key, "gamma-2.5-fast", "responses");
    assert.equal(t.gw.app.slots.inflight, 2);
    const full = await send(t, k.key, "delta-eta-4.6-low-fast", "responses", "полно");
    await assertCapacityRefusal(full, "responses", "service_capacity_saturated", "eta fast, every slot busy");
    await standard.body!.cancel();
    await fast.body!.cancel();
    await assertAllSlotsFree(t, "after cancel");
  }, { MAX_INFLIGHT_UPSTREAM: "2", PRIORITY_SLOT_SHARE: "0.5" }));

Deno.test("capacity: a slot comes back however the request ends (one slot, each ending in turn)", () =>
  withGateway(async (t) => {
    assert.deepEqual([t.gw.app.slots.max, t.gw.app.slots.reserved], [1, 0]);
    const k = await t.newKey("10.00");
    const poor = await t.newKey("0.000001");
    const chat = (key: string, text: string, extra = {}) =>
      post(t.url + "/v1/chat/completions", key, {
        model: "k3",
        max_tokens: 50,
        messages: [{ role: "user", content: text }],
        ...extra,
      });
    const endings: [string, () => Promise<number>][] = [
      ["JSON answer", async () => (await chat(k.key, "привет")).text().then(() => 200)],
      ["stream to its end", async () => {
        const res = await chat(k.key, "привет [[sim:words=30]]", { stream: true });
        await res.text();
        return res.status;
      }],
      ["upstream 500", async () => (await chat(k.key, "[[sim:fault=status:500]]")).status],
      ["upstream 429 (the family's own code)", async () => {
        const res = await chat(k.key, "[[sim:fault=status:429]]");
        assert.equal((await res.json()).error.code, "alpha_provider_rate_limit");
        return res.status;
      }],
      ["invalid answer", async () => (await chat(k.key, "[[sim:fault=non_json]]")).status],
      ["error inside the stream", async () => {
        const res = await chat(k.key, "[[sim:fault=error_mid]]", { stream: true });
        assert.match(await res.text(), /alpha_unavailable/);
        return res.status;
      }],
      ["stream cut", async () => {
        const res = await chat(k.key, "[[sim:fault=cut_mid]]", { stream: true });
        await res.text();
        return res.status;
      }],
      ["headers timeout", async () => (await chat(k.key, "[[sim:delay=3000]]")).status],
      ["client gone before the head", async () => {
        const client = new AbortController();
        const pending = fetch(t.url + "/v1/chat/completions", {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${k.key}` },
          body: JSON.stringify({ model: "k3", messages: [{ role: "user", content: "[[sim:delay=3000]]" }] }),
          signal: client.signal,
        }).catch((e) => e);
        for (let i = 0; i < 100 && t.gw.app.slots.inflight === 0; i++) await sleep(10);
        assert.equal(t.gw.app.slots.inflight, 1, "the slot is held while the upstream thinks");
        client.abort();
        return (await pending).name === "AbortError" ? 0 : -1;
      }],
      ["client gone mid-stream", async () => {
        const res = await chat(k.key, "[[sim:fault=stall]]", { stream: true });
        const reader = res.body!.getReader();
        await reader.read();
        await reader.cancel();
        return res.status;
      }],
      ["refused at the reserve (after the slot was taken)", async () => {
        const res = await chat(poor.key, "дорого", { max_tokens: 4000 });
        assert.equal((await res.json()).error.code, "request_reserve_exceeds_credit");
        return res.status;
      }],
    ];
    const expected = [200, 200, 503, 429, 502, 200, 200, 504, 0, 200, 402];
    for (const [i, [name, run]] of endings.entries()) {
      assert.equal(await run(), expected[i], name);
      await assertAllSlotsFree(t, name);
    }
    // The one slot is still usable: nothing leaked.
    assert.equal((await chat(k.key, "ещё раз")).status, 200);
    await assertAllSlotsFree(t, "last");
    assert.equal((await keyView(t, k.id)).held_usd, "0.00");
  }, {
    MAX_INFLIGHT_UPSTREAM: "1",
    PRIORITY_SLOT_SHARE: "0",
    UPSTREAM_HEADERS_TIMEOUT_MS: "300",
    UPSTREAM_GENERATION_TIMEOUT_MS: "300", // a JSON request's bound: the "headers timeout" ending below
  }));

Deno.test("capacity: MAX_INFLIGHT_UPSTREAM=0 bounds nothing (the count is still kept)", () =>
  withGateway(async (t) => {
    const k = await t.newKey("10.00");
    const open = [];
    for (let i = 0; i < 5; i++) open.push(await openStall(t, k.key, "k3", "chat"));
    assert.equal(t.gw.app.slots.inflight, 5);
    for (const res of open) await res.body!.cancel();
    await assertAllSlotsFree(t, "unbounded");
  }, { MAX_INFLIGHT_UPSTREAM: "0" }));
