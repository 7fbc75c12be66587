/**
 * The key's own theta limits through a running gateway (spec §7.6, §3.2): `customer_hour_limit` and
 * `customer_day_limit` (429, Retry-After = seconds to the end of the UTC hour or day) once the key's theta
 * requests in the window reach the limit set with POST /admin/keys/{id}/theta; admitted requests count,
 * refused ones do not (nor other families', nor count_tokens); `api_key_paused` (403) for a paused key. On one
 * gateway, and with two gateways on one Postgres.
 */
import assert from "node:assert/strict";
import { DAY, HOUR } from "../../src/store/shared_window.ts";
import {
  ANTHROPIC_HEADERS,
  post,
  startTestGateway,
  type TestGateway,
  withGateway,
} from "../support/harness.ts";
import { pgGatewayTest } from "../support/pg_harness.ts";

type Surface = "chat" | "messages" | "responses";
const PATH: Record<Surface, string> = {
  chat: "/v1/chat/completions",
  messages: "/theta/v1/messages",
  responses: "/v1/responses",
};

function body(surface: Surface, model = "theta3.8-omni-flash", text = "Привет [[sim:words=3]]") {
  return surface === "responses"
    ? { model, max_output_tokens: 50, input: text }
    : { model, max_tokens: 50, messages: [{ role: "user", content: text }] };
}

async function call(t: TestGateway, key: string, surface: Surface, b: unknown = body(surface)) {
  const before = Date.now();
  const res = await post(t.url + PATH[surface], key, b, ANTHROPIC_HEADERS);
  const json = await res.json();
  return {
    status: res.status,
    json,
    code: json.error?.code,
    retryAfter: res.headers.get("retry-after"),
    before,
  };
}

const limits = (t: TestGateway, id: string, b: Record<string, unknown>) =>
  t.admin("POST", `/admin/keys/${id}/theta`, b);

/** Retry-After is the seconds from the request to its window's end (the request took `before`..now). */
function assertRetryAfter(r: { retryAfter: string | null; before: number }, window: number, where: string) {
  const end = r.before - (r.before % window) + window;
  const ra = Number(r.retryAfter);
  assert.ok(
    ra <= Math.ceil((end - r.before) / 1000) && ra >= Math.floor((end - Date.now()) / 1000),
    `${where}: Retry-After ${r.retryAfter}`,
  );
}

/** Waits out the last seconds of a UTC hour, so a test's requests share one hour. */
async function awayFromHourEnd(): Promise<void> {
  const left = HOUR - (Date.now() % HOUR);
  if (left < 15_000) await new Promise((r) => setTimeout(r, left + 100));
}

Deno.test("theta: customer_hour_limit at the key's hourly requests, Retry-After to the hour's end; refusals not counted", () =>
  withGateway(async (t) => {
    await awayFromHourEnd();
    const k = await t.newKey("5.00");
    const set = await limits(t, k.id, { hourly_requests: 2 });
    assert.deepEqual(set.json.theta, { paused: false, hourly_requests: 2, daily_requests: null });
    assert.equal((await call(t, k.key, "chat")).status, 200);
    assert.equal((await call(t, k.key, "messages")).status, 200);
    const sent = t.sim.requests.length;
    for (const surface of ["chat", "messages", "responses"] as const) {
      const r = await call(t, k.key, surface);
      assert.deepEqual([r.status, r.code], [429, "customer_hour_limit"], surface);
      assert.equal(r.json.error.type, "rate_limit_error");
      assert.match(r.json.error.message, /часовой лимит theta.*Лимит ключа: 2 запросов theta в час \(UTC\)/);
      assert.match(r.json.error.message, /\[customer_hour_limit · req_[^\]]+\]$/);
      if (surface === "messages") assert.equal(r.json.type, "error");
      assertRetryAfter(r, HOUR, surface);
    }
    assert.equal(t.sim.requests.length, sent, "the refused went nowhere");
    // Three refusals, none counted: a limit of 3 admits exactly one more.
    await limits(t, k.id, { hourly_requests: 3 });
    assert.equal((await call(t, k.key, "responses")).status, 200);
    assert.equal((await call(t, k.key, "chat")).code, "customer_hour_limit");
    await limits(t, k.id, { hourly_requests: null });
    assert.equal((await call(t, k.key, "chat")).status, 200, "null: no limit");
    const { json } = await t.admin("GET", `/admin/keys/${k.id}`);
    assert.deepEqual([json.held_usd, json.theta.hourly_requests], ["0.00", null]);
  }));

Deno.test("theta: customer_day_limit at the key's daily requests, Retry-After to the UTC day's end", () =>
  withGateway(async (t) => {
    await awayFromHourEnd();
    const k = await t.newKey("5.00");
    await limits(t, k.id, { hourly_requests: 10, daily_requests: 2 });
    for (const surface of ["responses", "chat"] as const) {
      assert.equal((await call(t, k.key, surface)).status, 200);
    }
    const r = await call(t, k.key, "messages");
    assert.deepEqual([r.status, r.code], [429, "customer_day_limit"]);
    assert.match(r.json.error.message, /дневной лимит theta.*2 запросов theta в сутки/);
    assertRetryAfter(r, DAY, "day");
    assert.ok(Number(r.retryAfter) > 0 && Number(r.retryAfter) <= 86_400);
    // The hour's limit is checked first.
    await limits(t, k.id, { hourly_requests: 2 });
    assert.equal((await call(t, k.key, "chat")).code, "customer_hour_limit");
  }));

Deno.test("theta limits count only admitted theta generations: not local refusals, other families or count_tokens", () =>
  withGateway(async (t) => {
    await awayFromHourEnd();
    const k = await t.newKey("5.00");
    await limits(t, k.id, { hourly_requests: 1 });
    // Refused by a rule before admission: an image to theta3.7-max, an output budget over the limit.
    const image = {
      model: "theta3.7-max",
      max_tokens: 50,
      messages: [{
        role: "user",
        content: [{ type: "image_url", image_url: { url: "https://example.com/a.png" } }],
      }],
    };
    assert.equal((await call(t, k.key, "chat", image)).code, "invalid_parameter");
    assert.equal(
      (await call(t, k.key, "chat", { ...body("chat"), max_tokens: 131_073 })).code,
      "invalid_parameter",
    );
    for (const model of ["k3", "beta-haiku-4-5", "gamma-2.5"]) {
      assert.equal((await call(t, k.key, "chat", body("chat", model))).status, 200, model);
    }
    const counted = await post(
      t.url + "/theta/v1/messages/count_tokens",
      k.key,
      body("messages"),
      ANTHROPIC_HEADERS,
    );
    assert.equal(counted.status, 200);
    assert.equal((await call(t, k.key, "messages")).status, 200, "the first theta generation of the hour");
    assert.equal((await call(t, k.key, "messages")).code, "customer_hour_limit");
    assert.equal((await call(t, k.key, "chat", body("chat", "k3"))).status, 200, "other families unaffected");
  }));

Deno.test("theta: api_key_paused 403 for a paused key, before its limits and not counted", () =>
  withGateway(async (t) => {
    await awayFromHourEnd();
    const k = await t.newKey("5.00");
    const set = await limits(t, k.id, { paused: true, hourly_requests: 1 });
    assert.deepEqual([set.json.theta_paused, set.json.theta.paused], [true, true]);
    for (const surface of ["chat", "messages", "responses"] as const) {
      const r = await call(t, k.key, surface);
      assert.deepEqual(
        [r.status, r.code, r.json.error.type],
        [403, "api_key_paused", "permission_error"],
        surface,
      );
    }
    assert.equal((await call(t, k.key, "chat", body("chat", "k3"))).status, 200, "only theta is paused");
    await limits(t, k.id, { paused: false });
    assert.equal((await call(t, k.key, "chat")).status, 200, "the paused requests were not counted");
    assert.equal((await call(t, k.key, "chat")).code, "customer_hour_limit");
  }));

/** 12 theta requests of one key at once, spread over `gateways`: exactly `limit` are admitted. */
async function contended(gateways: TestGateway[], key: string, limit: number) {
  const results = await Promise.all(
    Array.from({ length: 12 }, (_, i) => call(gateways[i % gateways.length]!, key, "chat")),
  );
  const codes = results.map((r) => r.status === 200 ? "ok" : r.code).sort();
  assert.deepEqual(
    codes,
    [...Array(limit).fill("ok"), ...Array(12 - limit).fill("customer_hour_limit")].sort(),
  );
}

Deno.test("theta: concurrent requests of one key admit exactly the hourly limit", () =>
  withGateway(async (t) => {
    await awayFromHourEnd();
    const k = await t.newKey("5.00");
    await limits(t, k.id, { hourly_requests: 5 });
    await contended([t], k.key, 5);
  }));

pgGatewayTest(
  "theta: two gateways on one Postgres admit exactly the key's hourly limit between them",
  async (env) => {
    await awayFromHourEnd();
    const a = await startTestGateway({ ...env, KEY_REFRESH_MS: "100" });
    const b = await startTestGateway({ ...env, KEY_REFRESH_MS: "100" });
    try {
      const k = await a.newKey("5.00");
      await limits(a, k.id, { hourly_requests: 7 });
      await contended([a, b], k.key, 7);
    } finally {
      await b.close();
      await a.close();
    }
  },
);
