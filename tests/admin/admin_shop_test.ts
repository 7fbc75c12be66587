/**
 * The key shop's operator API against a real gateway: packages, payment methods, keys by chat and
 * by hint, a key's ledger, payments (list, confirm a manual one, refund). Checkouts and Stars payments are made
 * through the gateway's own Shop (what the bot calls: src/bot/flows/), the rest over HTTP; issued and rotated
 * keys are used on /v1. On Postgres: two gateways settling one payment at once credit it once, and a rotation
 * on one gateway ends the old secret on the other.
 */
import assert from "node:assert/strict";
import { formatUsd, parseUsd } from "../../src/money/usd.ts";
import type { LeaseLedger } from "../../src/accounts/lease_ledger.ts";
import type { Payment, ShopCourier } from "../../src/shop/mod.ts";
import { post, startTestGateway, type TestGateway, withGateway } from "../support/harness.ts";
import { pgGatewayTest } from "../support/pg_harness.ts";

const KEY_RE = /^gd-[A-Za-z0-9_-]{43}$/;
const USD = 1_000_000_000_000n;

async function modelsStatus(t: TestGateway, key: string): Promise<{ status: number; code?: string }> {
  const res = await fetch(`${t.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
  const json = await res.json() as any;
  return res.status === 200 ? { status: 200 } : { status: res.status, code: json.error?.code };
}

/** The code of the GatewayError a shop operation refused with (undefined: it did not refuse). */
async function codeOf(op: Promise<unknown>): Promise<string | undefined> {
  try {
    await op;
    return undefined;
  } catch (err) {
    return (err as { code?: string }).code;
  }
}

/** An error answer of the admin API: its status and code. */
const refusal = (r: { status: number; json: any }) => [r.status, r.json.error?.code];

/** A package of `credit` USD for 50 Stars, active. */
async function starsPackage(t: TestGateway, credit = "5.00") {
  const r = await t.admin("POST", "/admin/packages", {
    name: "Старт",
    credit_usd: credit,
    price: 50,
    currency: "XTR",
  });
  assert.equal(r.status, 201, JSON.stringify(r.json));
  return r.json.id as string;
}

/** The bot's Stars purchase: checkout, then successful_payment with a charge id. */
async function buyWithStars(
  t: TestGateway,
  chatId: number,
  pkgId: string,
  keyId: string | null,
  charge: string,
) {
  const shop = t.gw.app.shop;
  const p = await shop.createPayment(chatId, pkgId, "stars", keyId);
  assert.deepEqual(await shop.checkPayable(p.id, p.price, p.currency), { ok: true });
  return await shop.settlePayment(p.id, charge, Date.now());
}

const ledger = async (t: TestGateway, keyId: string) => {
  const r = await t.admin("GET", `/admin/keys/${keyId}/ledger`);
  assert.equal(r.status, 200, JSON.stringify(r.json));
  return (r.json.data as any[]).map((e) => [e.kind, e.amount_usd, e.reference]);
};

const keyJson = async (t: TestGateway, keyId: string) => (await t.admin("GET", `/admin/keys/${keyId}`)).json;

/** One small generation request with `key`, read to its end and settled (nothing held any more). */
async function spend(t: TestGateway, key: string, keyId: string): Promise<void> {
  const res = await post(t.url + "/v1/chat/completions", key, {
    model: "k3",
    max_tokens: 20,
    messages: [{ role: "user", content: "x" }],
  });
  assert.equal(res.status, 200);
  await res.text();
  while ((await keyJson(t, keyId)).held_usd !== "0.00") await new Promise((r) => setTimeout(r, 5));
}

Deno.test("admin packages: create, list, edit, validation and unknown ids", () =>
  withGateway(async (t) => {
    assert.deepEqual((await t.admin("GET", "/admin/packages")).json, { object: "list", data: [] });
    const big = await t.admin("POST", "/admin/packages", {
      name: "Большой",
      credit_usd: "100.000000000001",
      price: 5000,
      currency: "XTR",
      active: false,
    });
    assert.equal(big.status, 201);
    assert.match(big.json.id, /^pkg_/);
    assert.deepEqual({ ...big.json, id: "" }, {
      id: "",
      object: "package",
      name: "Большой",
      credit_usd: "100.000000000001",
      price: 5000,
      currency: "XTR",
      active: false,
    });
    const small = await starsPackage(t, "5.00");
    const list = (await t.admin("GET", "/admin/packages")).json.data;
    assert.deepEqual(list.map((p: any) => [p.id, p.price]), [[small, 50], [big.json.id, 5000]], "by price");

    const edited = await t.admin("PATCH", `/admin/packages/${big.json.id}`, { active: true, price: 4000 });
    assert.equal(edited.status, 200);
    assert.deepEqual([edited.json.active, edited.json.price, edited.json.credit_usd], [
      true,
      4000,
      "100.000000000001",
    ]);
    assert.deepEqual(refusal(await t.admin("PATCH", "/admin/packages/pkg_nope", { active: true })), [
      404,
      "package_not_found",
    ]);
    for (
      const [body, param] of [
        [{ name: "x", credit_usd: "1", price: 0, currency: "XTR" }, "price"],
        [{ name: "x", credit_usd: "1", price: 1.5, currency: "XTR" }, "price"],
        [{ name: "x", credit_usd: "1", price: 1, currency: "xtr" }, "currency"],
        [{ name: "x", credit_usd: "-1", price: 1, currency: "XTR" }, "credit_usd"],
        [{ name: "x", credit_usd: "0", price: 1, currency: "XTR" }, "credit_usd"],
        [{ name: "", credit_usd: "1", price: 1, currency: "XTR" }, "name"],
        [{ name: "x", credit_usd: "1", price: 1 }, "currency"],
        [{ name: "x", credit_usd: "1", price: 1, currency: "XTR", extra: 1 }, null],
      ] as const
    ) {
      const r = await t.admin("POST", "/admin/packages", body);
      assert.deepEqual(refusal(r), [400, "invalid_request"], JSON.stringify(body));
      assert.equal(r.json.error.param, param, JSON.stringify(body));
      assert.match(r.json.error.message, /[а-яё]/i);
    }
    assert.deepEqual(refusal(await t.admin("PATCH", `/admin/packages/${small}`, { price: -1 })), [
      400,
      "invalid_request",
    ]);
    assert.equal(
      (await t.admin("GET", "/admin/packages")).json.data.length,
      2,
      "nothing created by refusals",
    );
  }));

Deno.test("admin payment methods: the seed, the switch and the manual details; unknown ids and bad bodies", () =>
  withGateway(async (t) => {
    const seed = (await t.admin("GET", "/admin/payment-methods")).json;
    assert.deepEqual(seed, {
      object: "list",
      data: [
        {
          id: "manual",
          object: "payment_method",
          title: "Перевод по реквизитам",
          kind: "manual",
          available: false,
          details: null,
        },
        {
          id: "stars",
          object: "payment_method",
          title: "Telegram Stars",
          kind: "stars",
          available: true,
          details: null,
        },
      ],
    });
    const on = await t.admin("POST", "/admin/payment-methods/manual", {
      available: true,
      details: "Карта 2200 0000",
    });
    assert.equal(on.status, 200);
    assert.deepEqual([on.json.available, on.json.details], [true, "Карта 2200 0000"]);
    const off = await t.admin("POST", "/admin/payment-methods/stars", { available: false });
    assert.equal(off.json.available, false);
    assert.deepEqual(
      (await t.gw.app.shop.listPaymentMethods({ availableOnly: true })).map((m) => m.id),
      ["manual"],
      "what the bot lists",
    );
    assert.deepEqual(refusal(await t.admin("POST", "/admin/payment-methods/card", { available: true })), [
      404,
      "payment_method_not_found",
    ]);
    assert.deepEqual(refusal(await t.admin("POST", "/admin/payment-methods/stars", {})), [
      400,
      "invalid_request",
    ]);
    assert.deepEqual(refusal(await t.admin("POST", "/admin/payment-methods/stars", { available: "yes" })), [
      400,
      "invalid_request",
    ]);
    assert.deepEqual(refusal(await t.admin("POST", "/admin/payment-methods/stars", { kind: "manual" })), [
      400,
      "invalid_request",
    ]);
  }));

Deno.test("a Stars purchase: the first issues a working key with the package's credit, once; keys by chat and hint; the ledger", () =>
  withGateway(async (t) => {
    const pkg = await starsPackage(t, "5.00");
    const first = await buyWithStars(t, 42, pkg, null, "ch_1");
    assert.equal(first.outcome, "credited");
    assert.match(first.newKey!, KEY_RE);
    const keyId = first.keyId!;
    assert.deepEqual(await modelsStatus(t, first.newKey!), { status: 200 });
    assert.equal((await keyJson(t, keyId)).balance_usd, "5.00");

    // Telegram delivers successful_payment again: nothing more.
    const again = await t.gw.app.shop.settlePayment(first.payment.id, "ch_1", Date.now());
    assert.deepEqual([again.outcome, again.newKey], ["duplicate", undefined]);
    // A later purchase tops up the chat's key.
    const second = await buyWithStars(t, 42, pkg, keyId, "ch_2");
    assert.deepEqual([second.outcome, second.keyId, second.newKey], ["credited", keyId, undefined]);
    const view = await keyJson(t, keyId);
    assert.deepEqual([view.balance_usd, view.credited_usd], ["10.00", "10.00"]);

    const byChat = await t.admin("GET", "/admin/keys?chat_id=42");
    assert.equal(byChat.status, 200);
    assert.deepEqual(byChat.json.data.map((k: any) => [k.id, k.chat_id, k.balance_usd]), [[
      keyId,
      42,
      "10.00",
    ]]);
    assert.ok(!JSON.stringify(byChat.json).includes(first.newKey!), "the secret is never shown again");
    const byHint = await t.admin("GET", `/admin/keys?hint=${encodeURIComponent(view.hint)}`);
    assert.ok(byHint.json.data.some((k: any) => k.id === keyId && k.chat_id === 42));
    const adminKey = await t.newKey("1.00");
    const other = await t.admin(
      "GET",
      `/admin/keys?hint=${encodeURIComponent((await keyJson(t, adminKey.id)).hint)}`,
    );
    assert.deepEqual(
      other.json.data.find((k: any) => k.id === adminKey.id)?.chat_id,
      null,
      "not sold by the shop",
    );
    assert.deepEqual((await t.admin("GET", "/admin/keys?chat_id=43")).json.data, []);

    assert.deepEqual(await ledger(t, keyId), [
      ["credit", "5.00", `payment:${first.payment.id}`],
      ["credit", "5.00", `payment:${second.payment.id}`],
    ]);
    const credited = (await t.admin("GET", "/admin/payments?status=credited")).json.data;
    assert.deepEqual(
      credited.map((p: any) => [p.id, p.status, p.telegram_charge_id, p.key_id, p.credit_usd]),
      [
        [second.payment.id, "credited", "ch_2", keyId, "5.00"],
        [first.payment.id, "credited", "ch_1", keyId, "5.00"],
      ],
    );
    assert.deepEqual((await t.admin("GET", "/admin/payments?chat_id=43")).json.data, []);
    assert.equal((await t.admin("GET", "/admin/payments?chat_id=42&limit=1")).json.data.length, 1);

    for (const q of ["", "?chat_id=1&hint=x", "?chat_id=abc", "?hint="]) {
      assert.deepEqual(refusal(await t.admin("GET", `/admin/keys${q}`)), [400, "invalid_request"], q);
    }
    for (const q of ["?status=paid", "?limit=0", "?chat_id=x"]) {
      assert.deepEqual(refusal(await t.admin("GET", `/admin/payments${q}`)), [400, "invalid_request"], q);
    }
    assert.deepEqual(refusal(await t.admin("GET", "/admin/keys/key_nope/ledger")), [404, "key_not_found"]);
  }));

Deno.test("the admin's key creation and top-up write ledger entries with the money", () =>
  withGateway(async (t) => {
    const k = await t.newKey("2.50");
    assert.equal((await t.admin("POST", `/admin/keys/${k.id}/topup`, { amount_usd: "1.25" })).status, 200);
    assert.equal((await t.admin("POST", `/admin/keys/${k.id}/topup`, { amount_usd: "0" })).status, 200);
    assert.deepEqual(await ledger(t, k.id), [["credit", "2.50", "initial"], [
      "credit",
      "1.25",
      "admin:topup",
    ]]);
    assert.equal((await keyJson(t, k.id)).credited_usd, "3.75");
    const empty = await t.newKey("0");
    assert.deepEqual(await ledger(t, empty.id), []);
  }));

Deno.test("a method switched off after the invoice: pre-checkout refused, a payment that arrives anyway is refund_due", () =>
  withGateway(async (t) => {
    const shop = t.gw.app.shop;
    const pkg = await starsPackage(t);
    const late = await shop.createPayment(7, pkg, "stars", null);
    const refused = await shop.createPayment(7, pkg, "stars", null);
    await t.admin("POST", "/admin/payment-methods/stars", { available: false });
    assert.equal(await codeOf(shop.createPayment(7, pkg, "stars", null)), "payment_method_unavailable");
    const check = await shop.checkPayable(refused.id, refused.price, refused.currency);
    assert.equal(check.ok, false);
    assert.equal((await shop.getPayment(refused.id))!.status, "cancelled");

    const r = await shop.settlePayment(late.id, "ch_late", Date.now());
    assert.deepEqual([r.outcome, r.keyId, r.newKey], ["refund_due", null, undefined]);
    assert.deepEqual((await t.admin("GET", "/admin/keys?chat_id=7")).json.data, [], "no key issued");
    assert.deepEqual(
      (await t.gw.app.shop.settlePayment(late.id, "ch_late", Date.now())).outcome,
      "duplicate",
    );
    const due = (await t.admin("GET", "/admin/payments?status=refund_due")).json.data;
    assert.deepEqual(due.map((p: any) => [p.id, p.telegram_charge_id]), [[late.id, "ch_late"]]);
    // Money that came for the cancelled checkout is not lost either.
    assert.equal((await shop.settlePayment(refused.id, "ch_refused", Date.now())).outcome, "refund_due");

    // The operator's refund of a Stars payment goes through the bot; without one here it is refused.
    assert.deepEqual(refusal(await t.admin("POST", `/admin/payments/${late.id}/refund`)), [
      409,
      "stars_refund_unavailable",
    ]);
    const returned: string[] = [];
    t.gw.app.shop.courier = courier({ refundStars: (p) => void returned.push(p.telegramChargeId!) });
    const refunded = await t.admin("POST", `/admin/payments/${late.id}/refund`);
    assert.equal(refunded.status, 200);
    assert.equal(refunded.json.status, "refunded");
    assert.deepEqual(returned, ["ch_late"]);
    assert.deepEqual(refusal(await t.admin("POST", `/admin/payments/${late.id}/refund`)), [
      409,
      "payment_not_refundable",
    ]);
    assert.deepEqual(returned, ["ch_late"], "no second Stars refund");
  }));

/** A courier that records what the shop asked the bot to do. */
function courier(over: Partial<Record<keyof ShopCourier, (x: any) => void>> = {}): ShopCourier {
  return {
    announceSettlement: (r) => Promise.resolve(over.announceSettlement?.(r)),
    refundStars: (p) => Promise.resolve(over.refundStars?.(p)),
    announceRefund: (p) => Promise.resolve(over.announceRefund?.(p)),
  };
}

Deno.test("a manual payment confirmed by the operator: the key's secret to the buyer's chat through the bot, else in the answer", () =>
  withGateway(async (t) => {
    const shop = t.gw.app.shop;
    await t.admin("POST", "/admin/payment-methods/manual", { available: true, details: "Карта 2200 0000" });
    const pkg = (await t.admin("POST", "/admin/packages", {
      name: "Рубли",
      credit_usd: "3.00",
      price: 30000,
      currency: "RUB",
    })).json.id;
    assert.equal(
      await codeOf(shop.createPayment(5, pkg, "stars", null)),
      "payment_method_unavailable",
      "Stars pay XTR packages only",
    );
    const p = await shop.createPayment(5, pkg, "manual", null);
    const confirmed = await t.admin("POST", `/admin/payments/${p.id}/confirm`);
    assert.equal(confirmed.status, 200);
    assert.deepEqual([confirmed.json.outcome, confirmed.json.announced], ["credited", false]);
    assert.match(confirmed.json.key, KEY_RE);
    assert.equal(confirmed.json.payment.status, "credited");
    const keyId = confirmed.json.key_id;
    assert.deepEqual(await modelsStatus(t, confirmed.json.key), { status: 200 });
    assert.equal((await keyJson(t, keyId)).balance_usd, "3.00");
    const twice = await t.admin("POST", `/admin/payments/${p.id}/confirm`);
    assert.deepEqual([twice.status, twice.json.outcome, twice.json.key], [200, "duplicate", undefined]);
    assert.equal((await keyJson(t, keyId)).balance_usd, "3.00");

    // With the bot running, the buyer gets the secret in the chat and the answer does not carry it.
    const told: unknown[] = [];
    shop.courier = courier({ announceSettlement: (r) => void told.push(r) });
    const p2 = await shop.createPayment(6, pkg, "manual", null);
    const viaBot = await t.admin("POST", `/admin/payments/${p2.id}/confirm`, {});
    assert.deepEqual([viaBot.json.outcome, viaBot.json.announced, viaBot.json.key], [
      "credited",
      true,
      undefined,
    ]);
    assert.equal(told.length, 1);
    assert.match((told[0] as any).newKey, KEY_RE);

    const stars = await shop.createPayment(5, await starsPackage(t), "stars", keyId);
    assert.deepEqual(refusal(await t.admin("POST", `/admin/payments/${stars.id}/confirm`)), [
      409,
      "payment_not_manual",
    ]);
    assert.deepEqual(refusal(await t.admin("POST", "/admin/payments/pay_nope/confirm")), [
      404,
      "payment_not_found",
    ]);
    assert.deepEqual(refusal(await t.admin("POST", `/admin/payments/${p.id}/confirm`, [1])), [
      400,
      "invalid_body_type",
    ]);
  }));

Deno.test("refunds: the key debited with a ledger entry; refused while the credit is spent; twice is refused", () =>
  withGateway(async (t) => {
    const shop = t.gw.app.shop;
    await t.admin("POST", "/admin/payment-methods/manual", { available: true, details: "Карта" });
    const pkg = (await t.admin("POST", "/admin/packages", {
      name: "Ручной",
      credit_usd: "2.00",
      price: 200,
      currency: "RUB",
    })).json.id;
    const p1 = await shop.createPayment(9, pkg, "manual", null);
    const first = await shop.confirmPayment(p1.id, Date.now());
    const keyId = first.keyId!;
    const p2 = await shop.createPayment(9, pkg, "manual", keyId);
    await shop.confirmPayment(p2.id, Date.now());
    assert.equal((await keyJson(t, keyId)).balance_usd, "4.00");

    const refunded = await t.admin("POST", `/admin/payments/${p2.id}/refund`);
    assert.equal(refunded.status, 200, JSON.stringify(refunded.json));
    assert.equal(refunded.json.status, "refunded");
    const view = await keyJson(t, keyId);
    assert.deepEqual([view.balance_usd, view.credited_usd], ["2.00", "2.00"]);
    assert.deepEqual(await ledger(t, keyId), [
      ["credit", "2.00", `payment:${p1.id}`],
      ["credit", "2.00", `payment:${p2.id}`],
      ["debit", "2.00", `refund:${p2.id}`],
    ]);
    assert.deepEqual(refusal(await t.admin("POST", `/admin/payments/${p2.id}/refund`)), [
      409,
      "payment_not_refundable",
    ]);

    // Spend some of the rest: the first payment can no longer be taken back whole.
    await spend(t, first.newKey!, keyId);
    const spent = await keyJson(t, keyId);
    assert.ok(parseUsd(spent.spent_usd) > 0n, JSON.stringify(spent));
    const r = await t.admin("POST", `/admin/payments/${p1.id}/refund`);
    assert.deepEqual(refusal(r), [409, "refund_exceeds_balance"]);
    assert.match(r.json.error.message, /[а-яё]/i);
    assert.deepEqual(await keyJson(t, keyId), spent, "nothing moved");
    assert.equal((await shop.getPayment(p1.id))!.status, "credited");
    const pending = await shop.createPayment(9, pkg, "manual", keyId);
    assert.deepEqual(refusal(await t.admin("POST", `/admin/payments/${pending.id}/refund`)), [
      409,
      "payment_not_refundable",
    ]);
    assert.deepEqual(refusal(await t.admin("POST", "/admin/payments/pay_nope/refund")), [
      404,
      "payment_not_found",
    ]);
    // credited = Σ credits − Σ debits of the ledger, and the harness's identity on close.
    assert.equal(parseUsd(spent.credited_usd), 2n * USD);
  }));

Deno.test("rotation: a new secret for the same key — balance, caps, theta and usage stay — the old one refused at once", () =>
  withGateway(async (t) => {
    const shop = t.gw.app.shop;
    const pkg = await starsPackage(t, "5.00");
    const bought = await buyWithStars(t, 11, pkg, null, "ch_r");
    const keyId = bought.keyId!;
    const oldKey = bought.newKey!;
    assert.equal(
      (await t.admin("POST", `/admin/keys/${keyId}/caps`, { daily_spend_usd: "4.00" })).status,
      200,
    );
    assert.equal((await t.admin("POST", `/admin/keys/${keyId}/theta`, { paused: true })).status, 200);
    await spend(t, oldKey, keyId);
    const before = await keyJson(t, keyId);

    const rotated = await shop.rotateKey(11, keyId);
    assert.equal(rotated.keyId, keyId);
    assert.match(rotated.newKey, KEY_RE);
    assert.notEqual(rotated.newKey, oldKey);
    assert.deepEqual(await modelsStatus(t, oldKey), { status: 401, code: "invalid_api_key" });
    assert.deepEqual(await modelsStatus(t, rotated.newKey), { status: 200 });
    const after = await keyJson(t, keyId);
    assert.deepEqual({ ...after, hint: before.hint }, before, "only the hint changed");
    assert.equal(after.hint, `${rotated.newKey.slice(0, 7)}…`);
    const usage = await fetch(`${t.url}/v1/usage`, {
      headers: { authorization: `Bearer ${rotated.newKey}` },
    });
    assert.equal(usage.status, 200);
    assert.ok(JSON.stringify(await usage.json()).includes("k3"), "the usage history is the same key's");

    // Another chat cannot rotate, revoke or see it.
    assert.deepEqual(await shop.keysOfChat(12), []);
    assert.equal(await codeOf(shop.rotateKey(12, keyId)), "key_not_found");
    assert.equal(await codeOf(shop.revokeKey(12, keyId)), "key_not_found");
    assert.deepEqual(await modelsStatus(t, rotated.newKey), { status: 200 });
    await shop.revokeKey(11, keyId);
    assert.deepEqual(await modelsStatus(t, rotated.newKey), { status: 401, code: "api_key_revoked" });
    assert.equal(await codeOf(shop.rotateKey(11, keyId)), "key_revoked");
    assert.equal(await codeOf(shop.createPayment(11, pkg, "stars", keyId)), "key_revoked");
  }));

Deno.test("low-balance alerts: once per crossing, cleared when the balance rises, a threshold of the holder's", () =>
  withGateway(async (t) => {
    const shop = t.gw.app.shop;
    const pkg = await starsPackage(t, "1.00");
    const k = await buyWithStars(t, 21, pkg, null, "ch_a1");
    assert.deepEqual(await shop.dueAlerts(Date.now()), [], "1.00 is above 10% of 1.00");
    await shop.setAlertThreshold(21, k.keyId!, 2n * USD);
    const due = await shop.dueAlerts(Date.now());
    assert.deepEqual(due, [{
      chatId: 21,
      keyId: k.keyId,
      hint: (await keyJson(t, k.keyId!)).hint,
      balance: USD,
      threshold: 2n * USD,
    }]);
    assert.deepEqual(await shop.dueAlerts(Date.now()), [], "once per crossing");
    await buyWithStars(t, 21, pkg, k.keyId, "ch_a2"); // 2.00: at the threshold, not below
    assert.deepEqual(await shop.dueAlerts(Date.now()), []);
    await t.admin("POST", `/admin/keys/${k.keyId}/caps`, {}); // nothing moves money
    const spendable = await shop.keysOfChat(21);
    assert.deepEqual(spendable.map((r) => formatUsd(r.balance)), ["2.00"]);
    // Spend below 2.00 again: a new crossing.
    await spend(t, k.newKey!, k.keyId!);
    const again = await shop.dueAlerts(Date.now());
    assert.deepEqual(again.map((a) => a.keyId), [k.keyId]);
    assert.equal(await codeOf(shop.setAlertThreshold(22, k.keyId!, USD)), "key_not_found");
    assert.equal(await codeOf(shop.setAlertThreshold(21, k.keyId!, -1n)), "invalid_request");
  }));

/** What `t.admin` answers for the key on gateway `t`, as a number of pico-USD. */
const balanceOn = async (t: TestGateway, keyId: string) => parseUsd((await keyJson(t, keyId)).balance_usd);

pgGatewayTest(
  "two gateways on one Postgres: one payment settled on both at once credits once; a rotation ends the old secret on both",
  async (env) => {
    const a = await startTestGateway({ ...env, KEY_REFRESH_MS: "100" });
    const b = await startTestGateway({ ...env, KEY_REFRESH_MS: "100" });
    try {
      const pkg = await starsPackage(a, "5.00");
      const first = await buyWithStars(a, 31, pkg, null, "ch_p1");
      const keyId = first.keyId!;
      for (let i = 0; i < 4; i++) {
        const p: Payment = await b.gw.app.shop.createPayment(31, pkg, "stars", keyId);
        const both = await Promise.all([
          a.gw.app.shop.settlePayment(p.id, `ch_p2_${i}`, Date.now()),
          b.gw.app.shop.settlePayment(p.id, `ch_p2_${i}`, Date.now()),
        ]);
        assert.deepEqual(both.map((r) => r.outcome).sort(), ["credited", "duplicate"]);
      }
      assert.equal(await balanceOn(a, keyId), 25n * USD);
      assert.equal(await balanceOn(b, keyId), 25n * USD);
      assert.equal((await ledger(b, keyId)).length, 5);

      assert.deepEqual(await modelsStatus(b, first.newKey!), { status: 200 });
      const rotated = await a.gw.app.shop.rotateKey(31, keyId);
      assert.deepEqual(await modelsStatus(a, first.newKey!), { status: 401, code: "invalid_api_key" });
      let refused = false;
      for (let i = 0; i < 50 && !refused; i++) {
        refused = (await modelsStatus(b, first.newKey!)).status === 401;
        if (!refused) await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(refused, "B drops the old secret at its next key refresh");
      assert.deepEqual(await modelsStatus(b, rotated.newKey), { status: 200 });

      // A refund on B of a payment credited on A. What B may debit is the store's free credit: A's lease (taken
      // by a request on A) not counted, B's own beyond its holds counted (B gives it back first).
      const p = await a.gw.app.shop.createPayment(31, pkg, "stars", keyId);
      await a.gw.app.shop.settlePayment(p.id, "ch_p3", Date.now());
      await spend(a, rotated.newKey, keyId);
      await spend(b, rotated.newKey, keyId);
      const accB = (await b.gw.app.accounts.find(keyId))!;
      const holderB = (b.gw.app.accounts.ledger as LeaseLedger).holder;
      const view = (await b.gw.app.store.leaseView(keyId, holderB, Date.now()))!;
      assert.ok(view.leased > view.mine && view.mine > 0n, "leases of both gateways");
      const debitable = view.credited - view.spent - view.leased + view.mine;
      assert.equal(await b.gw.app.accounts.debitable(accB), debitable);
      const returned: string[] = [];
      b.gw.app.shop.courier = courier({ refundStars: (x) => void returned.push(x.id) });
      const refunded = await b.gw.app.shop.refund(p.id, Date.now());
      assert.deepEqual(returned, [p.id]);
      assert.equal(refunded.status, "refunded");
      assert.equal(
        (await b.gw.app.store.getKey(keyId))!.credited,
        view.credited - 5n * USD,
        "debited once, in the store",
      );
    } finally {
      await b.close();
      await a.close();
    }
  },
);
