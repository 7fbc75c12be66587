/**
 * The gateway's own request rates (spec §7.3 client_key_rate_limit, client_ip_rate_limit) through a
 * running gateway: every keyed route counts, admin does not; the exact Retry-After; each surface's
 * envelope; nothing held, charged or sent upstream; the address limit before authentication;
 * X-Forwarded-For only from TRUSTED_PROXIES; 0 = off. The clock is the app's, moved by the test.
 */
import assert from "node:assert/strict";
import { ADMIN_TOKEN, ANTHROPIC_HEADERS, type TestGateway, withGateway } from "../support/harness.ts";

/** Freezes the gateway's clock; returns a function that moves it forward by `ms`. */
function freezeClock(t: TestGateway): (ms: number) => void {
  let now = Math.floor(Date.now() / 1000) * 1000;
  t.gw.app.now = () => now;
  return (ms) => {
    now += ms;
  };
}

type Envelope = "anthropic" | "openai" | "detail";

interface Call {
  name: string;
  envelope: Envelope;
  /** The status of an admitted call (the helpers are sent an empty body: a 400, still counted). */
  admitted: number;
  send(t: TestGateway, key: string | null, headers?: Record<string, string>): Promise<Response>;
}

const json = (method: string, path: string, body?: unknown, extra: Record<string, string> = {}) =>
(
  t: TestGateway,
  key: string | null,
  headers: Record<string, string> = {},
) =>
  fetch(t.url + path, {
    method,
    headers: {
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(key === null ? {} : { authorization: `Bearer ${key}` }),
      ...extra,
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

const USER = [{ role: "user", content: "Привет [[sim:words=3]]" }];

/** One call per keyed route kind: the generation surfaces and every other keyed endpoint. */
const CALLS: Call[] = [
  {
    name: "Messages",
    envelope: "anthropic",
    admitted: 200,
    send: json("POST", "/v1/messages", { model: "beta-haiku-4-5", max_tokens: 50, messages: USER }, {
      ...ANTHROPIC_HEADERS,
    }),
  },
  {
    name: "Chat Completions",
    envelope: "openai",
    admitted: 200,
    send: json("POST", "/v1/chat/completions", { model: "k3", messages: USER }),
  },
  {
    name: "Responses",
    envelope: "openai",
    admitted: 200,
    send: json("POST", "/v1/responses", { model: "gamma-2.5", input: "Привет [[sim:words=3]]" }),
  },
  {
    name: "theta Chat Completions",
    envelope: "openai",
    admitted: 200,
    send: json("POST", "/theta/v1/chat/completions", { model: "theta3.7-plus", messages: USER }),
  },
  {
    name: "count_tokens",
    envelope: "anthropic",
    admitted: 200,
    send: json("POST", "/v1/messages/count_tokens", { model: "beta-haiku-4-5", messages: USER }, {
      ...ANTHROPIC_HEADERS,
    }),
  },
  { name: "models", envelope: "openai", admitted: 200, send: json("GET", "/v1/models") },
  { name: "files", envelope: "detail", admitted: 200, send: json("GET", "/v1/files") },
  { name: "search helper", envelope: "openai", admitted: 400, send: json("POST", "/v1/alpha/search", {}) },
  { name: "fetch helper", envelope: "openai", admitted: 400, send: json("POST", "/v1/alpha/fetch", {}) },
  { name: "usage", envelope: "detail", admitted: 200, send: json("GET", "/v1/usage") },
  { name: "usage rows", envelope: "detail", admitted: 200, send: json("GET", "/v1/usage/requests") },
];

/** Asserts a 429 with `code` in the surface's envelope and returns its Retry-After. */
async function assertLimited(res: Response, envelope: Envelope, code: string, what: string): Promise<number> {
  const body = await res.json() as any;
  assert.equal(res.status, 429, `${what}: ${JSON.stringify(body)}`);
  const requestId = res.headers.get("request-id");
  assert.ok(requestId, what);
  assert.equal(body.request_id, requestId, what);
  let obj: any;
  if (envelope === "anthropic") {
    assert.equal(body.type, "error", what);
    assert.equal(body.detail, undefined, what);
    obj = body.error;
  } else if (envelope === "openai") {
    assert.equal(body.type, undefined, what);
    assert.equal(body.detail, undefined, what);
    obj = body.error;
  } else {
    assert.equal(body.error, undefined, `${what}: under detail.error only`);
    obj = body.detail.error;
  }
  assert.equal(obj.code, code, what);
  assert.ok(obj.message.endsWith(`[${code} · ${requestId}]`), `${what}: ${obj.message}`);
  assert.match(obj.message, /Слишком много запросов/, what);
  const retryAfter = res.headers.get("retry-after");
  assert.match(retryAfter ?? "", /^\d+$/, `${what}: Retry-After ${retryAfter}`);
  return Number(retryAfter);
}

async function keyView(t: TestGateway, id: string) {
  const { status, json } = await t.admin("GET", `/admin/keys/${id}`);
  assert.equal(status, 200);
  return { balance: json.balance_usd, held: json.held_usd, spent: json.spent_usd };
}

async function usageRows(t: TestGateway, keyId: string): Promise<number> {
  await t.gw.app.accounts.committer.flush();
  return (await t.gw.app.store.listUsage(keyId, { limit: 100 })).rows.length;
}

Deno.test("key rate: every keyed route counts; 429 client_key_rate_limit with the exact Retry-After in each surface's envelope; nothing held, charged or sent upstream; other keys unaffected", async () => {
  // One request every 2.5 s, burst 2: the third at once waits 2.5 s → Retry-After 3 (rounded up).
  await withGateway(async (t) => {
    const advance = freezeClock(t);
    const other = await t.newKey("10.00");
    for (const call of CALLS) {
      const k = await t.newKey("10.00");
      for (let i = 0; i < 2; i++) {
        const res = await call.send(t, k.key);
        assert.equal(
          res.status,
          call.admitted,
          `${call.name}: request ${i + 1} is within the burst: ${await res.text()}`,
        );
      }
      const before = await keyView(t, k.id);
      const rows = await usageRows(t, k.id);
      const upstream = t.sim.requests.length;

      assert.equal(
        await assertLimited(await call.send(t, k.key), call.envelope, "client_key_rate_limit", call.name),
        3,
      );
      assert.deepEqual(await keyView(t, k.id), before, `${call.name}: nothing held or charged`);
      assert.equal(await usageRows(t, k.id), rows, `${call.name}: no usage row`);
      assert.equal(t.sim.requests.length, upstream, `${call.name}: nothing sent upstream`);

      // Another key at the same instant is not affected.
      const res = await call.send(t, other.key);
      assert.equal(res.status, call.admitted, `${call.name}: another key: ${await res.text()}`);
      advance(2500); // the other key's bucket refills too, for the next route

      // Retry-After is exact: 2 s later it is still 1 s away; at 2.5 s the request passes.
      const k2 = await t.newKey("10.00");
      for (let i = 0; i < 2; i++) await (await call.send(t, k2.key)).body?.cancel();
      assert.equal(
        await assertLimited(await call.send(t, k2.key), call.envelope, "client_key_rate_limit", call.name),
        3,
      );
      advance(2000);
      assert.equal(
        await assertLimited(await call.send(t, k2.key), call.envelope, "client_key_rate_limit", call.name),
        1,
      );
      advance(499);
      assert.equal(
        await assertLimited(await call.send(t, k2.key), call.envelope, "client_key_rate_limit", call.name),
        1,
      );
      advance(1);
      const again = await call.send(t, k2.key);
      assert.equal(
        again.status,
        call.admitted,
        `${call.name}: admitted exactly at Retry-After: ${await again.text()}`,
      );
      advance(2500);
    }
  }, { KEY_RATE_LIMIT_RPS: "0.4", KEY_RATE_LIMIT_BURST: "2" });
});

Deno.test("key rate: a generation refused by the limit is not billed; the balance identity holds", async () => {
  await withGateway(async (t) => {
    freezeClock(t);
    const k = await t.newKey("1.00");
    const chat = CALLS[1]!;
    const ok = await chat.send(t, k.key);
    assert.equal(ok.status, 200);
    await ok.text();
    const after = await keyView(t, k.id);
    for (let i = 0; i < 5; i++) {
      await assertLimited(await chat.send(t, k.key), "openai", "client_key_rate_limit", "chat");
    }
    assert.deepEqual(await keyView(t, k.id), after);
    assert.equal(await usageRows(t, k.id), 1);
  }, { KEY_RATE_LIMIT_RPS: "1", KEY_RATE_LIMIT_BURST: "1" });
});

Deno.test("address rate: checked before authentication (a bad or missing key is refused with 429 client_ip_rate_limit); admin requests are not counted", async () => {
  await withGateway(async (t) => {
    const advance = freezeClock(t);
    const k = await t.newKey("10.00");
    const models = CALLS.find((c) => c.name === "models")!;
    const messages = CALLS[0]!;
    // Bad keys count: 401 within the burst.
    assert.equal((await models.send(t, "gd-wrong")).status, 401);
    assert.equal((await models.send(t, null)).status, 401);
    // Admin requests in between are not counted.
    for (let i = 0; i < 10; i++) await t.newKey("1.00");
    assert.equal((await t.admin("GET", "/admin/ledger")).status, 200);
    assert.equal((await models.send(t, k.key)).status, 200);
    // Over the burst: the address limit answers before the key is looked at, in the route's envelope.
    assert.equal(
      await assertLimited(await models.send(t, "gd-wrong"), "openai", "client_ip_rate_limit", "bad key"),
      1,
    );
    assert.equal(
      await assertLimited(await models.send(t, null), "openai", "client_ip_rate_limit", "no key"),
      1,
    );
    assert.equal(
      await assertLimited(await messages.send(t, k.key), "anthropic", "client_ip_rate_limit", "Messages"),
      1,
    );
    assert.equal(
      await assertLimited(await CALLS[6]!.send(t, k.key), "detail", "client_ip_rate_limit", "files"),
      1,
    );
    // An X-Forwarded-For from an untrusted peer is ignored: it does not buy a fresh bucket.
    assert.equal(
      await assertLimited(
        await models.send(t, k.key, { "x-forwarded-for": "203.0.113.9" }),
        "openai",
        "client_ip_rate_limit",
        "forwarded, untrusted",
      ),
      1,
    );
    // Admin still answers while the address is limited.
    assert.equal((await t.admin("GET", `/admin/keys/${k.id}`)).status, 200);
    advance(1000);
    assert.equal((await models.send(t, k.key)).status, 200);
    await assertLimited(await models.send(t, k.key), "openai", "client_ip_rate_limit", "again");
  }, { IP_RATE_LIMIT_RPS: "1", IP_RATE_LIMIT_BURST: "3" });
});

Deno.test("address rate: from a trusted proxy, the right-most untrusted X-Forwarded-For address is the client", async () => {
  await withGateway(async (t) => {
    freezeClock(t);
    const k = await t.newKey("10.00");
    const models = CALLS.find((c) => c.name === "models")!;
    const from = (xff?: string) => models.send(t, k.key, xff === undefined ? {} : { "x-forwarded-for": xff });
    assert.equal((await from("203.0.113.1")).status, 200);
    await assertLimited(await from("203.0.113.1"), "openai", "client_ip_rate_limit", "same client");
    // A value the client put on the left does not change who it is.
    await assertLimited(
      await from("198.51.100.77, 203.0.113.1"),
      "openai",
      "client_ip_rate_limit",
      "spoofed",
    );
    // Other clients behind the proxy have their own buckets.
    assert.equal((await from("203.0.113.2")).status, 200);
    assert.equal((await from("2001:db8:1:2::1")).status, 200);
    // The same IPv6 /64 is one client.
    await assertLimited(await from("2001:db8:1:2::ffff"), "openai", "client_ip_rate_limit", "same /64");
    // Trusted hops are skipped; the proxy's own address (no header) is its own bucket.
    assert.equal((await from("203.0.113.3, 127.0.0.1")).status, 200);
    await assertLimited(await from("203.0.113.3"), "openai", "client_ip_rate_limit", "via two hops");
    assert.equal((await from()).status, 200);
    await assertLimited(await from(), "openai", "client_ip_rate_limit", "the proxy itself");
  }, { IP_RATE_LIMIT_RPS: "1", IP_RATE_LIMIT_BURST: "1", TRUSTED_PROXIES: "127.0.0.1/32" });
});

Deno.test("rates: 0 = off (the default, and a burst of 0); unknown paths and admin are never counted", async () => {
  for (
    const env of [{}, {
      KEY_RATE_LIMIT_RPS: "1",
      KEY_RATE_LIMIT_BURST: "0",
      IP_RATE_LIMIT_RPS: "0",
    }] as Record<
      string,
      string
    >[]
  ) {
    await withGateway(async (t) => {
      freezeClock(t);
      const k = await t.newKey("10.00");
      const models = CALLS.find((c) => c.name === "models")!;
      for (let i = 0; i < 30; i++) assert.equal((await models.send(t, k.key)).status, 200);
    }, env);
  }
  await withGateway(async (t) => {
    freezeClock(t);
    const k = await t.newKey("10.00");
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${t.url}/v1/nothing-here`, { headers: { authorization: `Bearer ${k.key}` } });
      assert.equal(res.status, 404);
      await res.body?.cancel();
      const adm = await fetch(`${t.url}/admin/ledger`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      assert.equal(adm.status, 200);
      await adm.body?.cancel();
    }
    assert.equal((await CALLS.find((c) => c.name === "models")!.send(t, k.key)).status, 200);
  }, {
    KEY_RATE_LIMIT_RPS: "1",
    KEY_RATE_LIMIT_BURST: "1",
    IP_RATE_LIMIT_RPS: "1",
    IP_RATE_LIMIT_BURST: "1",
  });
});

Deno.test("rates: a malformed TRUSTED_PROXIES or a negative rate stops the gateway at start-up", async () => {
  const { parseConfig } = await import("../../src/config/env.ts");
  assert.throws(() => parseConfig({ TRUSTED_PROXIES: "10.0.0.0/8, 10.0.0.0/40" }), /TRUSTED_PROXIES/);
  assert.throws(() => parseConfig({ KEY_RATE_LIMIT_RPS: "-1" }), /KEY_RATE_LIMIT_RPS/);
  assert.throws(() => parseConfig({ IP_RATE_LIMIT_BURST: "1.5" }), /IP_RATE_LIMIT_BURST/);
  const c = parseConfig({ TRUSTED_PROXIES: "127.0.0.1/32,::1" });
  assert.equal(c.TRUSTED_PROXIES.length, 2);
  assert.equal(c.KEY_RATE_LIMIT_RPS, 0);
});
