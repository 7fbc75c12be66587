/**
 * The operator CLI (scripts/admin.ts) run as a real subprocess: remote mode against a running
 * gateway, direct mode on a temporary DATA_DIR, and bad usage.
 */
import assert from "node:assert/strict";
import { ADMIN_TOKEN, startTestGateway } from "../support/harness.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const KEY_RE = /^gd-[A-Za-z0-9_-]{43}$/;

/** Only what Deno itself needs from the parent environment, so no stray GATEWAY_URL/DATA_DIR leaks in. */
function baseEnv(): Record<string, string> {
  const out: Record<string, string> = { NO_COLOR: "1" };
  for (const [k, v] of Object.entries(Deno.env.toObject())) {
    if (["PATH", "HOME", "TMPDIR", "XDG_CACHE_HOME"].includes(k) || k.startsWith("DENO_")) out[k] = v;
  }
  return out;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  /** Parsed JSON of stdout (for create: everything before the key line). */
  json: any;
}

async function cli(env: Record<string, string>, ...args: string[]): Promise<Run> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", "scripts/admin.ts", ...args],
    cwd: ROOT,
    env: { ...baseEnv(), ...env },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  const stderr = new TextDecoder().decode(out.stderr);
  let json: any;
  try {
    json = JSON.parse(args[1] === "create" ? stdout.trimEnd().split("\n").slice(0, -1).join("\n") : stdout);
  } catch {
    json = undefined;
  }
  return { code: out.code, stdout, stderr, json };
}

function ok(r: Run): Run {
  assert.equal(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}

/** The last line of a create's stdout, which must be the key and nothing else. */
function lastLine(r: Run): string {
  const lines = r.stdout.trimEnd().split("\n");
  return lines[lines.length - 1]!;
}

async function models(url: string, key: string): Promise<{ status: number; json: any }> {
  const res = await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, json: await res.json() };
}

Deno.test("admin CLI, remote mode: create, use, topup, show, revoke through the /admin API", async () => {
  const t = await startTestGateway();
  try {
    const env = { GATEWAY_URL: t.url, ADMIN_TOKEN };
    const created = ok(await cli(env, "key", "create", "--balance", "2.50", "--name", "cli"));
    const key = lastLine(created);
    assert.match(key, KEY_RE);
    assert.equal(created.json.balance_usd, "2.50");
    assert.equal(created.json.name, "cli");
    assert.ok(!("key" in created.json), "the key is printed alone, not inside the record");
    assert.doesNotMatch(created.stderr, /direct mode/);
    const id: string = created.json.id;

    assert.equal((await models(t.url, key)).status, 200);

    const topped = ok(await cli(env, "key", "topup", id, "1.25"));
    assert.equal(topped.json.balance_usd, "3.75");
    const shown = ok(await cli(env, "key", "show", id));
    assert.equal(shown.json.balance_usd, "3.75");
    assert.equal(shown.json.credited_usd, "3.75");
    assert.ok(!("key" in shown.json));

    const future = "2031-02-03T04:05:06.000Z";
    assert.equal(ok(await cli(env, "key", "expire", id, future)).json.expires_at, future);
    assert.equal(ok(await cli(env, "key", "theta", id, "paused")).json.theta_paused, true);
    assert.deepEqual(ok(await cli(env, "key", "theta", id, "--hourly-requests", "3")).json.theta, {
      paused: true,
      hourly_requests: 3,
      daily_requests: null,
    });
    assert.equal(ok(await cli(env, "key", "membership", id, "private")).json.membership, "private");
    const caps = ok(await cli(env, "key", "caps", id, "--daily-spend", "0.000000000001"));
    assert.equal(caps.json.caps.daily_spend_usd, "0.000000000001");

    const revoked = ok(await cli(env, "key", "revoke", id));
    assert.equal(revoked.json.state, "revoked");
    const after = await models(t.url, key);
    assert.equal(after.status, 401);
    assert.equal(after.json.error.code, "api_key_revoked");

    // Errors from the gateway: the Russian message on stderr, exit 1.
    const missing = await cli(env, "key", "show", "key_00000000000000000000");
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /Ключ с таким id не найден/);
    assert.equal(missing.stdout, "");
    const badAmount = await cli(env, "key", "topup", id, "1.2.3");
    assert.equal(badAmount.code, 1);
    assert.match(badAmount.stderr, /Запрос некорректен.*amount_usd/);
    const wrongToken = await cli({ ...env, ADMIN_TOKEN: "wrong-token-0123456789" }, "key", "show", id);
    assert.equal(wrongToken.code, 1);
    assert.match(wrongToken.stderr, /токен администратора/);
    assert.equal(ok(await cli(env, "key", "show", id)).json.balance_usd, "3.75");
  } finally {
    await t.close();
  }
});

Deno.test("admin CLI, direct mode: round-trips exact decimals through the KV store in DATA_DIR", async () => {
  const dir = await Deno.makeTempDir({ prefix: "admin_cli_" });
  try {
    const env = { DATA_DIR: dir };
    const created = ok(
      await cli(env, "key", "create", "--balance", "0.000000000001", "--membership", "private"),
    );
    assert.match(created.stderr, /direct mode/);
    assert.match(created.stderr, /single writer/);
    const key = lastLine(created);
    assert.match(key, KEY_RE);
    const id: string = created.json.id;
    assert.equal(created.json.balance_usd, "0.000000000001");
    assert.equal(created.json.membership, "private");
    assert.equal(created.json.name, null);
    await Deno.stat(`${dir}/gateway.kv`);

    // Every call is a fresh process: the values below come back from the store.
    assert.equal(ok(await cli(env, "key", "topup", id, "0.000000000001")).json.balance_usd, "0.000000000002");
    assert.equal(ok(await cli(env, "key", "topup", id, "10")).json.balance_usd, "10.000000000002");
    ok(
      await cli(
        env,
        "key",
        "caps",
        id,
        "--hourly-spend",
        "0.000000000001",
        "--daily-spend=123456789012345.123456789012",
        "--hourly-reserve",
        "2.5",
        "--daily-reserve",
        "7",
      ),
    );
    ok(await cli(env, "key", "theta", id, "paused", "--hourly-requests", "5", "--daily-requests=40"));
    ok(await cli(env, "key", "membership", id, "none"));
    let shown = ok(await cli(env, "key", "show", id)).json;
    assert.equal(shown.balance_usd, "10.000000000002");
    assert.equal(shown.credited_usd, "10.000000000002");
    assert.equal(shown.spent_usd, "0.00");
    assert.equal(shown.theta_paused, true);
    assert.deepEqual(shown.theta, { paused: true, hourly_requests: 5, daily_requests: 40 });
    const resumed = ok(await cli(env, "key", "theta", id, "resumed", "--daily-requests", "none")).json;
    assert.deepEqual(resumed.theta, { paused: false, hourly_requests: 5, daily_requests: null });
    assert.equal(shown.membership, null);
    assert.deepEqual(shown.caps, {
      hourly_spend_usd: "0.000000000001",
      daily_spend_usd: "123456789012345.123456789012",
      hourly_reserve_usd: "2.50",
      daily_reserve_usd: "7.00",
    });

    ok(await cli(env, "key", "caps", id, "--daily-spend", "none", "--daily-reserve", "none"));
    ok(await cli(env, "key", "suspend", id, "2000-01-01T00:00:00Z"));
    shown = ok(await cli(env, "key", "show", id)).json;
    assert.deepEqual(shown.caps, {
      hourly_spend_usd: "0.000000000001",
      daily_spend_usd: null,
      hourly_reserve_usd: "2.50",
      daily_reserve_usd: null,
    });
    assert.equal(shown.suspended_until, "2000-01-01T00:00:00.000Z");
    assert.equal(shown.state, "active");
    // "none" lifts a suspension (the API's {"until": null}).
    ok(await cli(env, "key", "suspend", id, "2100-01-01T00:00:00Z"));
    assert.equal(ok(await cli(env, "key", "show", id)).json.state, "suspended");
    assert.equal(ok(await cli(env, "key", "suspend", id, "none")).json.suspended_until, null);

    // A second key lives beside the first.
    const second = ok(await cli(env, "key", "create", "--balance", "0.00"));
    assert.equal(second.json.balance_usd, "0.00");
    assert.notEqual(second.json.id, id);
    assert.equal(ok(await cli(env, "key", "show", id)).json.balance_usd, "10.000000000002");

    assert.equal(ok(await cli(env, "key", "revoke", id)).json.state, "revoked");
    assert.equal(ok(await cli(env, "key", "show", id)).json.state, "revoked");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("admin CLI, direct mode: tariff set keeps tiers and search fee; a gateway started later uses it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "admin_cli_" });
  try {
    const env = { DATA_DIR: dir };
    const rowsOf = (r: Run, model: string) => r.json.data.filter((x: any) => x.model === model);
    const seeded = ok(await cli(env, "tariff", "show"));
    assert.match(seeded.stderr, /direct mode/);
    assert.equal(seeded.json.object, "list");
    assert.deepEqual(rowsOf(seeded, "k3"), [{
      model: "k3",
      input_usd_per_million: "3.00",
      output_usd_per_million: "15.00",
      cache_read_usd_per_million: "0.30",
      above_input_tokens: null,
      search: null,
      member_discount: true,
    }]);

    const set = ok(await cli(env, "tariff", "set", "theta3.7-plus", "--input", "0.45", "--output=1.70"));
    assert.deepEqual(
      rowsOf(set, "theta3.7-plus").map((r: any) => [r.above_input_tokens, r.input_usd_per_million, r.search]),
      [[null, "0.45", { usd: "0.01", per: "request" }], [256000, "1.20", { usd: "0.01", per: "request" }]],
    );
    ok(await cli(env, "tariff", "set", "k3", "--input", "3.5", "--output", "16"));
    ok(
      await cli(
        env,
        "tariff",
        "set",
        "gamma-2.5",
        "--input",
        "1.30",
        "--output",
        "10.40",
        "--cache-read",
        "none",
      ),
    );

    // A fresh process reads it all back from the store.
    const shown = ok(await cli(env, "tariff", "show"));
    assert.deepEqual(rowsOf(shown, "theta3.7-plus"), rowsOf(set, "theta3.7-plus"));
    const k3 = rowsOf(shown, "k3")[0];
    assert.deepEqual(
      [
        k3.input_usd_per_million,
        k3.cache_read_usd_per_million,
        k3.output_usd_per_million,
        k3.member_discount,
      ],
      ["3.50", "0.30", "16.00", true],
    );
    assert.equal(rowsOf(shown, "gamma-2.5")[0].cache_read_usd_per_million, null);
    assert.deepEqual(rowsOf(shown, "k3-256k"), rowsOf(seeded, "k3-256k"));

    const bad = await cli(env, "tariff", "set", "k3", "--input", "3.0000001", "--output", "16");
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /Запрос некорректен.*input_usd_per_million/);
    const unknown = await cli(env, "tariff", "set", "gpt-9", "--input", "1", "--output", "2");
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /rows\.0\.model/);

    const t = await startTestGateway({ DATABASE_URL: "", DATA_DIR: dir });
    try {
      const rates = t.gw.app.tariff.rates("k3", 10);
      assert.equal(rates?.input, 3_500_000n);
      assert.equal(rates?.output, 16_000_000n);
      assert.equal(t.gw.app.tariff.rates("theta3.7-plus", 256_001)?.input, 1_200_000n);
      // And remote mode edits the running gateway's live tariff.
      const remote = { GATEWAY_URL: t.url, ADMIN_TOKEN };
      const r = ok(
        await cli(remote, "tariff", "set", "k3", "--input", "2.75", "--output", "14", "--cache-read", "0.25"),
      );
      assert.deepEqual(
        rowsOf(r, "k3").map((x: any) => x.cache_read_usd_per_million),
        ["0.25"],
      );
      assert.equal(t.gw.app.tariff.rates("k3", 10)?.input, 2_750_000n);
      assert.deepEqual(ok(await cli(remote, "tariff", "show")).json, r.json);
    } finally {
      await t.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("admin CLI: bad usage exits 2, a failed operation exits 1, both with a message on stderr", async () => {
  const dir = await Deno.makeTempDir({ prefix: "admin_cli_" });
  try {
    const env = { DATA_DIR: dir };
    const usage: string[][] = [
      ["frobnicate"],
      ["key"],
      ["key", "destroy", "key_x"],
      ["key", "create"],
      ["key", "create", "--balance"],
      ["key", "create", "--balance", "1.00", "--colour", "red"],
      ["key", "create", "--balance", "1.00", "--membership", "public"],
      ["key", "show"],
      ["key", "topup", "key_x"],
      ["key", "topup", "key_x", "1.00", "extra"],
      ["key", "theta", "key_x", "maybe"],
      ["key", "theta", "key_x"],
      ["key", "theta", "key_x", "paused", "extra"],
      ["key", "theta", "key_x", "--hourly-requests", "-1"],
      ["key", "theta", "key_x", "--daily-requests", "2.5"],
      ["key", "theta", "key_x", "--weekly-requests", "1"],
      ["key", "membership", "key_x", "public"],
      ["key", "caps", "key_x"],
      ["key", "caps", "key_x", "--weekly-spend", "1"],
      ["tariff"],
      ["tariff", "list"],
      ["tariff", "show", "k3"],
      ["tariff", "set"],
      ["tariff", "set", "k3"],
      ["tariff", "set", "k3", "--input", "1.00"],
      ["tariff", "set", "k3", "extra", "--input", "1.00", "--output", "2.00"],
      ["tariff", "set", "k3", "--input", "1.00", "--output", "2.00", "--search", "0.01"],
    ];
    for (const args of usage) {
      const r = await cli(env, ...args);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, /admin: .+/);
      assert.match(r.stderr, /help/);
      assert.equal(r.stdout, "");
    }
    // Usage errors are caught before the store is touched.
    assert.deepEqual([...Deno.readDirSync(dir)], []);

    const help = ok(await cli(env, "help"));
    assert.match(help.stdout, /key create --balance/);
    assert.match(help.stdout, /GATEWAY_URL/);

    const badCreate = await cli(env, "key", "create", "--balance", "1.2.3");
    assert.equal(badCreate.code, 1);
    assert.match(badCreate.stderr, /Запрос некорректен.*balance_usd/);
    assert.equal(badCreate.stdout, "");

    const id: string = ok(await cli(env, "key", "create", "--balance", "1.00")).json.id;
    for (const args of [["topup", id, "1.2.3"], ["topup", id, "-1"], ["expire", id, "soon"]]) {
      const r = await cli(env, "key", ...args);
      assert.equal(r.code, 1, args.join(" "));
      assert.match(r.stderr, /Запрос некорректен/);
    }
    const missing = await cli(env, "key", "topup", "key_00000000000000000000", "1.00");
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /Ключ с таким id не найден/);
    assert.equal(ok(await cli(env, "key", "show", id)).json.balance_usd, "1.00");

    // Remote mode half-configured is refused rather than silently falling back to the store.
    const half = await cli({ GATEWAY_URL: "http://127.0.0.1:9" }, "key", "show", id);
    assert.equal(half.code, 2);
    assert.match(half.stderr, /ADMIN_TOKEN/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** `package create`: its whole stdout is the package (the `cli` helper reads a create's last line as a key). */
async function newPackage(env: Record<string, string>, ...args: string[]) {
  return JSON.parse(ok(await cli(env, "package", "create", ...args)).stdout);
}

Deno.test("admin CLI, the key shop (remote mode): packages, methods, payments confirmed and refunded, keys by chat, the ledger", async () => {
  const t = await startTestGateway();
  try {
    const env = { GATEWAY_URL: t.url, ADMIN_TOKEN };
    const pkg = await newPackage(
      env,
      "--name",
      "Старт",
      "--credit",
      "2.50",
      "--price",
      "250",
      "--currency",
      "RUB",
    );
    assert.deepEqual([pkg.object, pkg.credit_usd, pkg.price, pkg.currency, pkg.active], [
      "package",
      "2.50",
      250,
      "RUB",
      true,
    ]);
    const set = ok(await cli(env, "package", "set", pkg.id, "--price", "300", "--active", "no")).json;
    assert.deepEqual([set.price, set.active], [300, false]);
    ok(await cli(env, "package", "set", pkg.id, "--active=yes"));
    assert.deepEqual(ok(await cli(env, "package", "list")).json.data.map((p: any) => [p.id, p.price]), [[
      pkg.id,
      300,
    ]]);

    const manual = ok(await cli(env, "method", "set", "manual", "on", "--details", "Карта 2200 0000")).json;
    assert.deepEqual([manual.available, manual.details], [true, "Карта 2200 0000"]);
    assert.deepEqual(
      ok(await cli(env, "method", "list")).json.data.map((m: any) => [m.id, m.available]),
      [["manual", true], ["stars", true]],
    );

    // The bot's checkout; the operator confirms the transfer: no bot here, so the new key is printed last.
    const p = await t.gw.app.shop.createPayment(77, pkg.id, "manual", null);
    assert.deepEqual(
      ok(await cli(env, "payment", "list", "--status", "pending")).json.data.map((x: any) => x.id),
      [p.id],
    );
    const confirmed = ok(await cli(env, "payment", "confirm", p.id));
    const key = lastLine(confirmed);
    assert.match(key, KEY_RE);
    const settlement = JSON.parse(confirmed.stdout.trimEnd().split("\n").slice(0, -1).join("\n"));
    assert.deepEqual([settlement.outcome, settlement.announced, settlement.key], [
      "credited",
      false,
      undefined,
    ]);
    assert.equal((await models(t.url, key)).status, 200);
    const again = ok(await cli(env, "payment", "confirm", p.id));
    assert.equal(again.json.outcome, "duplicate");
    assert.doesNotMatch(again.stdout, /gd-/);

    const found = ok(await cli(env, "key", "find", "--chat", "77")).json.data;
    assert.deepEqual(found.map((k: any) => [k.id, k.chat_id, k.balance_usd]), [[
      settlement.key_id,
      77,
      "2.50",
    ]]);
    assert.deepEqual(
      ok(await cli(env, "key", "find", "--hint", found[0].hint)).json.data.map((k: any) => k.id),
      [
        settlement.key_id,
      ],
    );
    const refunded = ok(await cli(env, "payment", "refund", p.id)).json;
    assert.equal(refunded.status, "refunded");
    assert.deepEqual(
      ok(await cli(env, "key", "ledger", settlement.key_id)).json.data.map((
        e: any,
      ) => [e.kind, e.amount_usd, e.reference]),
      [["credit", "2.50", `payment:${p.id}`], ["debit", "2.50", `refund:${p.id}`]],
    );

    // Refusals: the gateway's Russian message, exit 1; bad usage, exit 2.
    const twice = await cli(env, "payment", "refund", p.id);
    assert.equal(twice.code, 1);
    assert.match(twice.stderr, /нельзя вернуть/);
    const unknown = await cli(env, "package", "set", "pkg_nope", "--price", "1");
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /Пакет с таким id не найден/);
    for (
      const args of [
        ["package", "create", "--name", "x"],
        ["package", "set", pkg.id],
        ["package", "set", pkg.id, "--active", "maybe"],
        ["package", "create", "--name", "x", "--credit", "1", "--price", "1.5", "--currency", "XTR"],
        ["method", "set", "manual"],
        ["method", "set", "manual", "maybe"],
        ["key", "find"],
        ["key", "find", "--chat", "1", "--hint", "x"],
        ["payment", "confirm"],
        ["payment", "nope"],
      ]
    ) {
      const r = await cli(env, ...args);
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    }
  } finally {
    await t.close();
  }
});

Deno.test("admin CLI, the key shop (direct mode): packages and methods kept in the KV store, a key's ledger", async () => {
  const dir = await Deno.makeTempDir({ prefix: "admin_cli_" });
  try {
    const env = { DATA_DIR: dir };
    const pkg = await newPackage(
      env,
      "--name",
      "Звёзды",
      "--credit",
      "1",
      "--price",
      "100",
      "--currency",
      "XTR",
    );
    ok(await cli(env, "method", "set", "stars", "off"));
    assert.deepEqual(ok(await cli(env, "package", "list")).json.data.map((p: any) => p.id), [pkg.id]);
    assert.deepEqual(
      ok(await cli(env, "method", "list")).json.data.map((m: any) => [m.id, m.available]),
      [["manual", false], ["stars", false]],
    );
    const created = ok(await cli(env, "key", "create", "--balance", "0.000000000001"));
    ok(await cli(env, "key", "topup", created.json.id, "2"));
    assert.deepEqual(
      ok(await cli(env, "key", "ledger", created.json.id)).json.data.map((
        e: any,
      ) => [e.amount_usd, e.reference]),
      [["0.000000000001", "initial"], ["2.00", "admin:topup"]],
    );
    assert.deepEqual(ok(await cli(env, "payment", "list")).json.data, []);
    assert.deepEqual(ok(await cli(env, "key", "find", "--chat", "5")).json.data, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
