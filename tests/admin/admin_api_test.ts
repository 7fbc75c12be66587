/**
 * The operator HTTP API under /admin/ against a real gateway: create, show and every action, exact
 * decimal money, validation (400 invalid_request with param), unknown ids, the admin token, and the
 * routes being absent when ADMIN_TOKEN is not configured.
 */
import assert from "node:assert/strict";
import { ADMIN_TOKEN, type TestGateway, withGateway } from "../support/harness.ts";

const KEY_RE = /^gd-[A-Za-z0-9_-]{43}$/;

/** A request with an arbitrary (or no) Authorization header and a raw body. */
async function raw(
  t: TestGateway,
  method: string,
  path: string,
  opts: { auth?: string; body?: string } = {},
) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (opts.auth !== undefined) headers.authorization = opts.auth;
  const res = await fetch(t.url + path, {
    method,
    headers,
    ...(opts.body === undefined ? {} : { body: opts.body }),
  });
  return { status: res.status, json: await res.json() as any };
}

async function modelsStatus(t: TestGateway, key: string): Promise<{ status: number; code?: string }> {
  const res = await fetch(`${t.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
  const json = await res.json() as any;
  return res.status === 200 ? { status: 200 } : { status: res.status, code: json.error?.code };
}

Deno.test("admin create: 201 with the full key only in the create response, GET never returns it", async () => {
  await withGateway(async (t) => {
    const created = await t.admin("POST", "/admin/keys", {
      balance_usd: "2.50",
      name: "Иван",
      membership: "private",
    });
    assert.equal(created.status, 201);
    const c = created.json;
    assert.match(c.key, KEY_RE);
    assert.match(c.id, /^key_[0-9a-f]{20}$/);
    assert.equal(c.object, "key");
    assert.equal(c.name, "Иван");
    assert.equal(c.membership, "private");
    assert.equal(c.state, "active");
    assert.equal(c.theta_paused, false);
    assert.deepEqual(c.theta, { paused: false, hourly_requests: null, daily_requests: null });
    assert.equal(c.balance_usd, "2.50");
    assert.equal(c.credited_usd, "2.50");
    assert.equal(c.spent_usd, "0.00");
    assert.equal(c.held_usd, "0.00");
    assert.equal(c.expires_at, null);
    assert.equal(c.suspended_until, null);
    assert.ok(!Number.isNaN(Date.parse(c.created_at)));
    assert.deepEqual(c.caps, {
      hourly_spend_usd: null,
      daily_spend_usd: null,
      hourly_reserve_usd: null,
      daily_reserve_usd: null,
    });
    assert.ok(c.key.startsWith(c.hint.replace("…", "")));
    assert.ok(c.hint.length < c.key.length);

    const got = await t.admin("GET", `/admin/keys/${c.id}`);
    assert.equal(got.status, 200);
    assert.ok(!("key" in got.json), "GET must never return the full key");
    assert.ok(!JSON.stringify(got.json).includes(c.key));
    const { key: _key, ...view } = c;
    assert.deepEqual(got.json, view);

    // Every action response is a view without the key as well.
    const topped = await t.admin("POST", `/admin/keys/${c.id}/topup`, { amount_usd: "1.00" });
    assert.equal(topped.status, 200);
    assert.ok(!("key" in topped.json));

    assert.deepEqual(await modelsStatus(t, c.key), { status: 200 });
  });
});

Deno.test("admin money: exact decimal strings with every ledger digit, 0.00 allowed", async () => {
  await withGateway(async (t) => {
    const zero = await t.admin("POST", "/admin/keys", { balance_usd: "0.00" });
    assert.equal(zero.status, 201);
    assert.equal(zero.json.balance_usd, "0.00");
    assert.equal(zero.json.credited_usd, "0.00");

    const tiny = await t.admin("POST", "/admin/keys", { balance_usd: "0.000000000001" });
    assert.equal(tiny.status, 201);
    assert.equal(tiny.json.balance_usd, "0.000000000001");
    const id = tiny.json.id;
    const up = await t.admin("POST", `/admin/keys/${id}/topup`, { amount_usd: "0.000000000001" });
    assert.equal(up.status, 200);
    assert.equal(up.json.balance_usd, "0.000000000002");
    assert.equal(up.json.credited_usd, "0.000000000002");
    const up2 = await t.admin("POST", `/admin/keys/${id}/topup`, { amount_usd: "10" });
    assert.equal(up2.json.balance_usd, "10.000000000002");
    assert.equal((await t.admin("GET", `/admin/keys/${id}`)).json.balance_usd, "10.000000000002");

    const big = await t.admin("POST", "/admin/keys", { balance_usd: "999999999999999.999999999999" });
    assert.equal(big.status, 201);
    assert.equal(big.json.balance_usd, "999999999999999.999999999999");
    assert.equal(
      (await t.admin("POST", `/admin/keys/${big.json.id}/topup`, { amount_usd: "0.000000000001" })).json
        .balance_usd,
      "1000000000000000.00",
    );

    const caps = await t.admin("POST", `/admin/keys/${id}/caps`, {
      hourly_spend_usd: "0.000000000001",
      daily_spend_usd: "123456789012345.123456789012",
    });
    assert.equal(caps.json.caps.hourly_spend_usd, "0.000000000001");
    assert.equal(caps.json.caps.daily_spend_usd, "123456789012345.123456789012");
  });
});

Deno.test("admin actions: topup, revoke, expire, suspend, theta, membership, caps", async () => {
  await withGateway(async (t) => {
    const { id, key } = await t.newKey("1.00");
    const act = async (action: string, body: unknown) => {
      const r = await t.admin("POST", `/admin/keys/${id}/${action}`, body);
      assert.equal(r.status, 200, `${action}: ${JSON.stringify(r.json)}`);
      assert.equal(r.json.id, id);
      return r.json;
    };

    assert.equal((await act("topup", { amount_usd: "0.50" })).balance_usd, "1.50");

    const future = new Date(Date.now() + 3_600_000).toISOString();
    const past = new Date(Date.now() - 3_600_000).toISOString();

    let v = await act("suspend", { until: future });
    assert.equal(v.state, "suspended");
    assert.equal(v.suspended_until, future);
    assert.equal((await modelsStatus(t, key)).code, "api_key_suspended");
    v = await act("suspend", { until: past });
    assert.equal(v.state, "active");
    assert.equal(v.suspended_until, past);
    assert.deepEqual(await modelsStatus(t, key), { status: 200 });

    v = await act("expire", { at: future });
    assert.equal(v.state, "active");
    assert.equal(v.expires_at, future);
    v = await act("expire", { at: "2000-01-01T00:00:00Z" });
    assert.equal(v.state, "expired");
    assert.equal(v.expires_at, "2000-01-01T00:00:00.000Z");
    assert.deepEqual(await modelsStatus(t, key), { status: 401, code: "api_key_expired" });
    assert.equal((await act("expire", { at: future })).state, "active");

    assert.equal((await act("theta", { paused: true })).theta_paused, true);
    assert.equal((await act("theta", { paused: false })).theta_paused, false);
    // Every field optional: an absent one keeps its value, null removes a limit.
    v = await act("theta", { paused: true, hourly_requests: 5, daily_requests: 0 });
    assert.deepEqual([v.theta_paused, v.theta], [true, {
      paused: true,
      hourly_requests: 5,
      daily_requests: 0,
    }]);
    v = await act("theta", { daily_requests: 40 });
    assert.deepEqual(v.theta, { paused: true, hourly_requests: 5, daily_requests: 40 });
    v = await act("theta", { paused: false, hourly_requests: null });
    assert.deepEqual(v.theta, { paused: false, hourly_requests: null, daily_requests: 40 });
    assert.deepEqual((await act("theta", {})).theta, v.theta);
    assert.deepEqual((await t.admin("GET", `/admin/keys/${id}`)).json.theta, v.theta);

    assert.equal((await act("membership", { membership: "private" })).membership, "private");
    assert.equal((await act("membership", { membership: null })).membership, null);

    v = await act("caps", {
      hourly_spend_usd: "1.00",
      daily_spend_usd: "5.5",
      hourly_reserve_usd: "0.25",
      daily_reserve_usd: "2",
    });
    assert.deepEqual(v.caps, {
      hourly_spend_usd: "1.00",
      daily_spend_usd: "5.50",
      hourly_reserve_usd: "0.25",
      daily_reserve_usd: "2.00",
    });
    v = await act("caps", { daily_spend_usd: null });
    assert.deepEqual(v.caps, {
      hourly_spend_usd: "1.00",
      daily_spend_usd: null,
      hourly_reserve_usd: "0.25",
      daily_reserve_usd: "2.00",
    });
    v = await act("caps", {});
    assert.equal(v.caps.hourly_spend_usd, "1.00");
    v = await act("caps", { hourly_spend_usd: null, hourly_reserve_usd: null, daily_reserve_usd: null });
    assert.deepEqual(v.caps, {
      hourly_spend_usd: null,
      daily_spend_usd: null,
      hourly_reserve_usd: null,
      daily_reserve_usd: null,
    });

    v = await act("revoke", {});
    assert.equal(v.state, "revoked");
    assert.deepEqual(await modelsStatus(t, key), { status: 401, code: "api_key_revoked" });
    // Revoke is final: a later expiry change does not bring the key back.
    assert.equal((await act("expire", { at: future })).state, "revoked");

    // An action body may be empty for revoke.
    const other = await t.newKey("1.00");
    const r = await raw(t, "POST", `/admin/keys/${other.id}/revoke`, { auth: `Bearer ${ADMIN_TOKEN}` });
    assert.equal(r.status, 200);
    assert.equal(r.json.state, "revoked");

    // Money is untouched by all of the above except the top-up.
    const final = await t.admin("GET", `/admin/keys/${id}`);
    assert.equal(final.json.balance_usd, "1.50");
    assert.equal(final.json.credited_usd, "1.50");
  });
});

Deno.test("admin bad bodies: 400 invalid_request with param, state untouched", async () => {
  await withGateway(async (t) => {
    const { id } = await t.newKey("1.00");
    const rows: [string, string, unknown, string | null][] = [
      ["POST", "/admin/keys", {}, "balance_usd"],
      ["POST", "/admin/keys", { balance_usd: 10 }, "balance_usd"],
      ["POST", "/admin/keys", { balance_usd: "1.2.3" }, "balance_usd"],
      ["POST", "/admin/keys", { balance_usd: "-1.00" }, "balance_usd"],
      ["POST", "/admin/keys", { balance_usd: "1.0000000000001" }, "balance_usd"],
      ["POST", "/admin/keys", { balance_usd: "1e3" }, "balance_usd"],
      ["POST", "/admin/keys", { balance_usd: "1.00", name: "x".repeat(201) }, "name"],
      ["POST", "/admin/keys", { balance_usd: "1.00", membership: "public" }, "membership"],
      ["POST", `/admin/keys/${id}/topup`, {}, "amount_usd"],
      ["POST", `/admin/keys/${id}/topup`, { amount_usd: "1.2.3" }, "amount_usd"],
      ["POST", `/admin/keys/${id}/topup`, { amount_usd: 1 }, "amount_usd"],
      ["POST", `/admin/keys/${id}/expire`, { at: "not a time" }, "at"],
      ["POST", `/admin/keys/${id}/expire`, {}, "at"],
      ["POST", `/admin/keys/${id}/suspend`, { until: "tomorrow-ish" }, "until"],
      ["POST", `/admin/keys/${id}/theta`, { paused: "yes" }, "paused"],
      ["POST", `/admin/keys/${id}/theta`, { paused: null }, "paused"],
      ["POST", `/admin/keys/${id}/theta`, { hourly_requests: -1 }, "hourly_requests"],
      ["POST", `/admin/keys/${id}/theta`, { hourly_requests: 2.5 }, "hourly_requests"],
      ["POST", `/admin/keys/${id}/theta`, { daily_requests: "10" }, "daily_requests"],
      ["POST", `/admin/keys/${id}/theta`, { daily_requests: 1_000_000_001 }, "daily_requests"],
      ["POST", `/admin/keys/${id}/membership`, { membership: "public" }, "membership"],
      ["POST", `/admin/keys/${id}/membership`, {}, "membership"],
      ["POST", `/admin/keys/${id}/caps`, { hourly_spend_usd: "x" }, "hourly_spend_usd"],
      ["POST", `/admin/keys/${id}/caps`, { daily_reserve_usd: 5 }, "daily_reserve_usd"],
    ];
    for (const [method, path, body, param] of rows) {
      const r = await t.admin(method, path, body);
      const label = `${path} ${JSON.stringify(body).slice(0, 80)}`;
      assert.equal(r.status, 400, label);
      assert.equal(r.json.error.code, "invalid_request", label);
      assert.equal(r.json.error.param, param, label);
      assert.match(r.json.error.message, /Запрос некорректен/, label);
    }

    // Unknown fields are rejected too (strict bodies).
    for (
      const [path, body] of [
        ["/admin/keys", { balance_usd: "1.00", bogus: 1 }],
        [`/admin/keys/${id}/topup`, { amount_usd: "1.00", extra: true }],
        [`/admin/keys/${id}/caps`, { weekly_spend_usd: "1.00" }],
        [`/admin/keys/${id}/theta`, { weekly_requests: 1 }],
      ] as const
    ) {
      const r = await t.admin("POST", path, body);
      assert.equal(r.status, 400, path);
      assert.equal(r.json.error.code, "invalid_request", path);
    }

    const auth = `Bearer ${ADMIN_TOKEN}`;
    const badJson = await raw(t, "POST", "/admin/keys", { auth, body: "{not json" });
    assert.equal(badJson.status, 400);
    assert.equal(badJson.json.error.code, "invalid_json");
    const notObject = await raw(t, "POST", "/admin/keys", { auth, body: "[]" });
    assert.equal(notObject.status, 400);
    assert.equal(notObject.json.error.code, "invalid_body_type");
    const badActionJson = await raw(t, "POST", `/admin/keys/${id}/topup`, { auth, body: "{" });
    assert.equal(badActionJson.status, 400);
    assert.equal(badActionJson.json.error.code, "invalid_json");

    const unknownAction = await t.admin("POST", `/admin/keys/${id}/delete`, {});
    assert.equal(unknownAction.status, 404);
    assert.equal(unknownAction.json.error.code, "route_not_found");

    const after = await t.admin("GET", `/admin/keys/${id}`);
    assert.equal(after.json.balance_usd, "1.00");
    assert.equal(after.json.state, "active");
    assert.equal(after.json.membership, null);
    assert.equal(after.json.expires_at, null);
  });
});

Deno.test("admin unknown key id: 404 key_not_found on GET and every action", async () => {
  await withGateway(async (t) => {
    const get = await t.admin("GET", "/admin/keys/key_00000000000000000000");
    assert.equal(get.status, 404);
    assert.equal(get.json.error.code, "key_not_found");
    assert.match(get.json.error.message, /Ключ с таким id не найден/);
    const valid: Record<string, unknown> = {
      topup: { amount_usd: "1.00" },
      revoke: {},
      expire: { at: "2030-01-01T00:00:00Z" },
      suspend: { until: "2030-01-01T00:00:00Z" },
      theta: { paused: true },
      membership: { membership: "private" },
      caps: { daily_spend_usd: null },
    };
    for (const [action, body] of Object.entries(valid)) {
      const r = await t.admin("POST", `/admin/keys/nope/${action}`, body);
      assert.equal(r.status, 404, action);
      assert.equal(r.json.error.code, "key_not_found", action);
    }
  });
});

Deno.test("admin token: missing or wrong → 401 admin_unauthorized, nothing changes", async () => {
  await withGateway(async (t) => {
    const { id, key } = await t.newKey("1.00");
    const bad = [
      undefined,
      "",
      `Bearer ${ADMIN_TOKEN}x`,
      `Bearer ${ADMIN_TOKEN.slice(0, -1)}`,
      `Basic ${ADMIN_TOKEN}`,
      `Bearer ${key}`,
    ];
    for (const auth of bad) {
      const opts = auth === undefined ? {} : { auth };
      for (
        const [method, path, body] of [
          ["POST", "/admin/keys", JSON.stringify({ balance_usd: "1.00" })],
          ["GET", `/admin/keys/${id}`, undefined],
          ["POST", `/admin/keys/${id}/topup`, JSON.stringify({ amount_usd: "5.00" })],
          ["POST", `/admin/keys/${id}/revoke`, "{}"],
        ] as const
      ) {
        const r = await raw(t, method, path, body === undefined ? opts : { ...opts, body });
        assert.equal(r.status, 401, `${method} ${path} with ${auth}`);
        assert.equal(r.json.error.code, "admin_unauthorized");
        assert.match(r.json.error.message, /токен администратора/);
      }
    }
    // The token is accepted case-insensitively on the scheme.
    const ok = await raw(t, "GET", `/admin/keys/${id}`, { auth: `bearer ${ADMIN_TOKEN}` });
    assert.equal(ok.status, 200);
    assert.equal(ok.json.balance_usd, "1.00");
    assert.equal(ok.json.state, "active");
  });
});

Deno.test("admin routes are absent without ADMIN_TOKEN: 404 route_not_found", async () => {
  await withGateway(async (t) => {
    assert.equal(t.gw.app.config.ADMIN_TOKEN, undefined);
    for (
      const [method, path, body] of [
        ["POST", "/admin/keys", JSON.stringify({ balance_usd: "1.00" })],
        ["GET", "/admin/keys/key_00000000000000000000", undefined],
        ["POST", "/admin/keys/key_00000000000000000000/topup", JSON.stringify({ amount_usd: "1.00" })],
      ] as const
    ) {
      for (const auth of [`Bearer ${ADMIN_TOKEN}`, undefined]) {
        const opts = { ...(auth === undefined ? {} : { auth }), ...(body === undefined ? {} : { body }) };
        const r = await raw(t, method, path, opts);
        assert.equal(r.status, 404, `${method} ${path}`);
        assert.equal(r.json.error.code, "route_not_found");
      }
    }
    // The rest of the gateway still answers.
    const models = await fetch(`${t.url}/v1/models`);
    assert.equal(models.status, 401);
    await models.body?.cancel();
  }, { ADMIN_TOKEN: "" });
});
