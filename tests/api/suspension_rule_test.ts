/**
 * The automatic suspension rule (issue 17 item 8; docs/api.md "Errors"; spec §7.3 api_key_suspended) through a
 * running gateway: a burst of requests refused for bad input suspends the key — 429 api_key_suspended with
 * the exact Retry-After on every keyed route, in each envelope — through the operator's own mechanism (the
 * admin key view shows it, `{"until": null}` lifts it); other keys are unaffected; money, rate and model
 * refusals do not count. The clock is the app's, frozen and moved by the test.
 */
import assert from "node:assert/strict";
import { ANTHROPIC_HEADERS, post, type TestGateway, withGateway } from "../support/harness.ts";

/** 3 bad-input refusals in a burst are allowed, the 4th suspends for 10 minutes. */
const RULE = { SUSPEND_BAD_REQUESTS: "3", SUSPEND_WINDOW_MS: "60000", SUSPEND_FOR_MS: "600000" };

function freezeClock(t: TestGateway): (ms: number) => void {
  let now = Math.floor(Date.now() / 1000) * 1000;
  t.gw.app.now = () => now;
  return (ms) => {
    now += ms;
  };
}

type Envelope = "anthropic" | "openai" | "detail";
type Send = (t: TestGateway, key: string) => Promise<Response>;

const get = (path: string): Send => (t, key) =>
  fetch(t.url + path, { headers: { authorization: `Bearer ${key}` } });
const postTo = (path: string, body: unknown, headers: Record<string, string> = {}): Send => (t, key) =>
  post(t.url + path, key, body, headers);
const USER = [{ role: "user", content: "Привет [[sim:words=3]]" }];

/** Every kind of keyed route, each with a request that is admitted when the key is not suspended. */
const ROUTES: { name: string; envelope: Envelope; send: Send }[] = [
  {
    name: "Messages",
    envelope: "anthropic",
    send: postTo(
      "/v1/messages",
      { model: "beta-haiku-4-5", max_tokens: 20, messages: USER },
      ANTHROPIC_HEADERS,
    ),
  },
  {
    name: "Chat Completions",
    envelope: "openai",
    send: postTo("/v1/chat/completions", { model: "k3", messages: USER }),
  },
  {
    name: "Responses",
    envelope: "openai",
    send: postTo("/v1/responses", { model: "gamma-2.5", input: "Привет" }),
  },
  {
    name: "count_tokens",
    envelope: "anthropic",
    send: postTo("/v1/messages/count_tokens", { model: "beta-haiku-4-5", messages: USER }, ANTHROPIC_HEADERS),
  },
  { name: "models", envelope: "openai", send: get("/v1/models") },
  { name: "files", envelope: "detail", send: get("/v1/files") },
  { name: "usage", envelope: "detail", send: get("/v1/usage") },
];

/** Requests refused for bad input, on several surfaces and endpoints (each a 400). */
const BAD: { code: string; send: Send }[] = [
  { code: "messages_required", send: postTo("/v1/chat/completions", { model: "k3" }) },
  { code: "invalid_json", send: postTo("/v1/messages", "{", ANTHROPIC_HEADERS) },
  { code: "model_required", send: postTo("/v1/responses", { input: "Привет" }) },
  { code: "invalid_managed_service_request", send: postTo("/v1/alpha/search", {}) },
];

async function assertSuspended(res: Response, envelope: Envelope, what: string): Promise<number> {
  const body = await res.json() as any;
  assert.equal(res.status, 429, `${what}: ${JSON.stringify(body)}`);
  const requestId = res.headers.get("request-id");
  // An authentication error: the object under `error` and mirrored under `detail.error` (spec §5.4, §7.1).
  assert.deepEqual(body.detail.error, body.error, what);
  assert.equal(body.type, envelope === "anthropic" ? "error" : undefined, what);
  assert.equal(body.error.code, "api_key_suspended", what);
  assert.ok(body.error.message.endsWith(`[api_key_suspended · ${requestId}]`), what);
  return Number(res.headers.get("retry-after"));
}

async function view(t: TestGateway, id: string) {
  const { status, json } = await t.admin("GET", `/admin/keys/${id}`);
  assert.equal(status, 200);
  return json;
}

Deno.test("suspension rule: a burst of bad-input refusals suspends the key (429 api_key_suspended, exact Retry-After, every route); the admin view shows it, the operator lifts it; other keys unaffected", async () => {
  await withGateway(async (t) => {
    const advance = freezeClock(t);
    const k = await t.newKey("10.00");
    const other = await t.newKey("10.00");
    for (const bad of BAD) {
      const res = await bad.send(t, k.key);
      const body = await res.json();
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal((body.error ?? body.detail.error).code, bad.code);
    }
    // The 4th refusal overflowed the rule: it was still answered with its own 400; from now on the key is frozen.
    const until = new Date(t.gw.app.now() + 600_000).toISOString();
    let v = await view(t, k.id);
    assert.equal(v.state, "suspended");
    assert.equal(v.suspended_until, until);
    for (const route of ROUTES) {
      assert.equal(await assertSuspended(await route.send(t, k.key), route.envelope, route.name), 600);
    }
    advance(1_500);
    assert.equal(await assertSuspended(await ROUTES[1]!.send(t, k.key), "openai", "1.5 s later"), 599);
    // Refused at authentication, nothing held or charged.
    v = await view(t, k.id);
    assert.equal(v.held_usd, "0.00");
    assert.equal(v.spent_usd, "0.00");

    // Another key at the same instant is served.
    const res = await ROUTES[1]!.send(t, other.key);
    assert.equal(res.status, 200, await res.text());

    // The operator lifts it with the same action that suspends.
    const lifted = await t.admin("POST", `/admin/keys/${k.id}/suspend`, { until: null });
    assert.equal(lifted.status, 200);
    assert.equal(lifted.json.state, "active");
    assert.equal(lifted.json.suspended_until, null);
    const again = await ROUTES[1]!.send(t, k.key);
    assert.equal(again.status, 200, await again.text());
  }, RULE);
});

Deno.test("suspension rule: refusals at a pace the bucket refills are never suspended; a window later the burst is allowed again", async () => {
  await withGateway(async (t) => {
    const advance = freezeClock(t);
    const k = await t.newKey("10.00");
    const bad = async () => {
      const res = await BAD[0]!.send(t, k.key);
      await res.body?.cancel();
      return res.status;
    };
    // One bad request every 20 s (3 per minute) for four minutes: the bucket refills as fast as it drains.
    for (let i = 0; i < 12; i++) {
      assert.equal(await bad(), 400);
      advance(20_000);
    }
    assert.equal((await view(t, k.id)).state, "active");
    // A full window later the whole burst is allowed again, and the one beyond it suspends.
    advance(60_000);
    for (let i = 0; i < 4; i++) assert.equal(await bad(), 400);
    assert.equal((await view(t, k.id)).state, "suspended");
    assert.equal(await bad(), 429);
  }, RULE);
});

Deno.test("suspension rule: money, cap, rate and model refusals do not count", async () => {
  await withGateway(async (t) => {
    freezeClock(t);
    const chat = (key: string, extra: Record<string, unknown> = {}) =>
      post(t.url + "/v1/chat/completions", key, { model: "k3", max_tokens: 1_000, messages: USER, ...extra });
    const refusedTimes = async (send: () => Promise<Response>, status: number, code: string) => {
      for (let i = 0; i < 6; i++) {
        const res = await send();
        const body = await res.json();
        assert.equal(res.status, status, JSON.stringify(body));
        assert.equal(body.error.code, code);
      }
    };
    // 402: the balance does not cover the reserve.
    const poor = await t.newKey("0.000001");
    await refusedTimes(() => chat(poor.key), 402, "request_reserve_exceeds_credit");
    // 429: the key's own reserve cap.
    const capped = await t.newKey("10.00");
    await t.admin("POST", `/admin/keys/${capped.id}/caps`, { hourly_reserve_usd: "0.000001" });
    await refusedTimes(() => chat(capped.key), 429, "hourly_reserve_limit");
    // 404: a model not in the catalog; 400 cyber_refusal: the model's refusal, not bad input.
    const curious = await t.newKey("10.00");
    await refusedTimes(() => chat(curious.key, { model: "k9" }), 404, "model_not_found");
    await refusedTimes(
      () =>
        post(t.url + "/v1/messages", curious.key, {
          model: "beta-haiku-4-5",
          max_tokens: 50,
          messages: [{ role: "user", content: "Вопрос [[sim:refusal]] [[sim:words=0]]" }],
        }, ANTHROPIC_HEADERS),
      400,
      "cyber_refusal",
    );
    for (const k of [poor, capped, curious]) assert.equal((await view(t, k.id)).state, "active");
    const ok = await chat(curious.key, { max_tokens: 10 });
    assert.equal(ok.status, 200, await ok.text());
  }, RULE);
});

Deno.test("suspension rule: SUSPEND_BAD_REQUESTS=0 turns it off", async () => {
  await withGateway(async (t) => {
    freezeClock(t);
    const k = await t.newKey("10.00");
    for (let i = 0; i < 10; i++) {
      assert.equal((await BAD[0]!.send(t, k.key).then(async (r) => (await r.body?.cancel(), r))).status, 400);
    }
    assert.equal((await view(t, k.id)).state, "active");
  }, { ...RULE, SUSPEND_BAD_REQUESTS: "0" });
});
