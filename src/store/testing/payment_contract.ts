/**
 * The Store contract of the key shop's payments (shop_store.ts: createPayment … refundPayment): money exactly
 * once — a settlement's credit, entry and status in one step, idempotent on the payment id and the charge id,
 * one winner among processes settling at once; a refund's debit refused while the key's free credit (leases
 * of every holder counted) cannot cover it. One suite for every backend (kv_store_test.ts, pg_store_test.ts).
 */
import assert from "node:assert/strict";
import { contractTest, type StoreBackend } from "./store_contract.ts";
import { funded, T, take } from "./lease_fixtures.ts";
import { entry, pkg } from "./shop_contract.ts";
import type { Store } from "../store.ts";
import { keyRecord } from "./test_fixtures.ts";
import type { KeyOwner, Payment, PaymentSettlement } from "../shop_types.ts";

export const payment = (id: string, over: Partial<Payment> = {}): Payment => ({
  id,
  chatId: 7,
  packageId: "pkg_a",
  methodId: "stars",
  keyId: "key_a",
  creditUsd: 100n,
  price: 500,
  currency: "XTR",
  status: "pending",
  telegramChargeId: null,
  createdAt: T,
  ...over,
});

/** A settlement crediting payment `id` of 100 to its key. */
export const credit = (id: string, charge: string | null, keyId = "key_a"): PaymentSettlement => ({
  paymentId: id,
  telegramChargeId: charge,
  credit: { entry: entry(keyId, `le_${id}`, 100n, { reference: `payment:${id}` }) },
});

/** A first purchase: the chat's key is created by the settlement. */
const firstPurchase = (id: string, charge: string | null, keyId: string): PaymentSettlement => ({
  paymentId: id,
  telegramChargeId: charge,
  credit: {
    entry: entry(keyId, `le_${id}`, 100n, { reference: `payment:${id}` }),
    newKey: keyRecord(keyId, { hash: `hash_${keyId}`, hint: "gd-new…", credited: 100n, balance: 100n }),
  },
});

/** key_a (credited 50), owned by chat 7 through a first purchase of 50 (pay_0). */
export async function ownedKey(store: Store): Promise<void> {
  await store.createPackage(pkg("pkg_a"));
  await store.createPayment(payment("pay_0", { keyId: null, creditUsd: 50n }));
  await store.settlePayment({
    paymentId: "pay_0",
    telegramChargeId: null,
    credit: {
      entry: entry("key_a", "le_pay_0", 50n, { reference: "payment:pay_0" }),
      newKey: keyRecord("key_a", { credited: 50n, balance: 50n }),
    },
  });
}

const money = async (store: Store, keyId = "key_a") => {
  const k = (await store.getKey(keyId))!;
  return [k.credited, k.spent, k.balance];
};

const owner = (over: Partial<KeyOwner> = {}): KeyOwner => ({
  keyId: "key_a",
  chatId: 7,
  alertThreshold: null,
  lastCreditUsd: 100n,
  alerted: false,
  ...over,
});

export function paymentContract(backend: StoreBackend): void {
  const test = contractTest(backend);

  test("payments: created once, listed newest first by status and by chat, cancelled only while pending", async (ctx) => {
    const { store } = ctx;
    await store.createPayment(payment("pay_1"));
    await store.createPayment(payment("pay_2", { createdAt: T + 2, chatId: 8 }));
    await store.createPayment(payment("pay_3", { createdAt: T + 1 }));
    await assert.rejects(store.createPayment(payment("pay_1")), /exists/);
    const ids = (ps: Payment[]) => ps.map((p) => p.id);
    assert.deepEqual(ids(await store.listPayments({ limit: 10 })), ["pay_2", "pay_3", "pay_1"]);
    assert.deepEqual(ids(await store.listPayments({ limit: 2 })), ["pay_2", "pay_3"]);
    assert.deepEqual(ids(await store.listPayments({ chatId: 7, limit: 10 })), ["pay_3", "pay_1"]);
    assert.deepEqual(await store.getPayment("pay_1"), payment("pay_1"));
    assert.equal(await store.getPayment("pay_x"), null);

    assert.deepEqual(
      await store.cancelPayment("pay_3"),
      payment("pay_3", { createdAt: T + 1, status: "cancelled" }),
    );
    assert.deepEqual(
      await store.cancelPayment("pay_3"),
      payment("pay_3", { createdAt: T + 1, status: "cancelled" }),
      "not pending: unchanged",
    );
    assert.equal(await store.cancelPayment("pay_x"), null);
    const other = await ctx.open();
    assert.deepEqual(ids(await other.listPayments({ status: "pending", limit: 10 })), ["pay_2", "pay_1"]);
    assert.deepEqual(ids(await other.listPayments({ status: "cancelled", limit: 10 })), ["pay_3"]);
    assert.deepEqual(ids(await other.listPayments({ status: "cancelled", chatId: 8, limit: 10 })), []);
    assert.deepEqual(ids(await other.listPayments({ status: "pending", chatId: 8, limit: 10 })), ["pay_2"]);
    assert.deepEqual(ids(await other.listPayments({ status: "credited", limit: 10 })), []);
  });

  test("settlePayment: a first purchase creates the chat's key with the credit, its entry and its owner, in one step", async (ctx) => {
    const { store } = ctx;
    await store.createPayment(payment("pay_1", { keyId: null }));
    const since = Date.now() - 1;
    const r = await store.settlePayment(firstPurchase("pay_1", "ch_1", "key_n"));
    const settled = payment("pay_1", { keyId: "key_n", status: "credited", telegramChargeId: "ch_1" });
    assert.deepEqual(r, { outcome: "credited", payment: settled });
    assert.deepEqual(await store.getPayment("pay_1"), settled);
    assert.deepEqual(await money(store, "key_n"), [100n, 0n, 100n]);
    assert.equal((await store.getKeyByHash("hash_key_n"))?.id, "key_n");
    assert.ok((await store.keyChanges(since)).some((k) => k.id === "key_n"), "other processes learn the key");
    assert.deepEqual(await store.listLedger("key_n"), [
      entry("key_n", "le_pay_1", 100n, { reference: "payment:pay_1" }),
    ]);
    assert.deepEqual(await store.listKeyOwners(7), [owner({ keyId: "key_n" })]);
    // Again, with the same charge or none, from another process: a duplicate, nothing written.
    const other = await ctx.open();
    assert.deepEqual(await other.settlePayment(firstPurchase("pay_1", "ch_1", "key_m")), {
      outcome: "duplicate",
      payment: settled,
    });
    assert.deepEqual(await other.settlePayment(firstPurchase("pay_1", null, "key_m")), {
      outcome: "duplicate",
      payment: settled,
    });
    assert.equal(await store.getKey("key_m"), null);
    assert.deepEqual(await money(store, "key_n"), [100n, 0n, 100n]);
  });

  test("settlePayment: a top-up credits the key once, idempotent on the payment id and on the charge id", async ({ store }) => {
    await ownedKey(store);
    await store.createPayment(payment("pay_1"));
    await store.createPayment(payment("pay_2"));
    const r = await store.settlePayment(credit("pay_1", "ch_1"));
    const settled = payment("pay_1", { status: "credited", telegramChargeId: "ch_1" });
    assert.deepEqual(r, { outcome: "credited", payment: settled });
    assert.deepEqual(await money(store), [150n, 0n, 150n]);
    assert.deepEqual(await store.getKeyOwner("key_a"), owner(), "the last purchase's credit");
    assert.deepEqual(await store.settlePayment(credit("pay_1", "ch_1")), {
      outcome: "duplicate",
      payment: settled,
    });
    assert.deepEqual(await store.settlePayment(credit("pay_1", "ch_9")), {
      outcome: "duplicate",
      payment: settled,
    });
    assert.deepEqual(
      await store.settlePayment(credit("pay_2", "ch_1")),
      { outcome: "duplicate", payment: settled },
      "another payment with a charge already recorded: the settled one, nothing written",
    );
    assert.deepEqual(await store.getPayment("pay_2"), payment("pay_2"));
    assert.deepEqual(await money(store), [150n, 0n, 150n]);
    assert.deepEqual((await store.listLedger("key_a")).map((e) => [e.reference, e.amountUsd]), [
      ["payment:pay_0", 50n],
      ["payment:pay_1", 100n],
    ]);
    assert.deepEqual((await store.listPayments({ status: "credited", limit: 10 })).map((p) => p.id).sort(), [
      "pay_0",
      "pay_1",
    ]);
    await assert.rejects(store.settlePayment(credit("pay_x", null)), /unknown payment/);
    await store.createPayment(payment("pay_3", { creditUsd: 7n }));
    await assert.rejects(
      store.settlePayment(credit("pay_3", null)),
      RangeError,
      "an entry of another amount",
    );
  });

  test("settlePayment: refund_due records the payment and its charge with no money; so do a cancelled payment and a revoked key", async ({ store }) => {
    await ownedKey(store);
    await store.createPayment(payment("pay_1"));
    await store.createPayment(payment("pay_2"));
    await store.createPayment(payment("pay_3"));
    const due = await store.settlePayment({ paymentId: "pay_1", telegramChargeId: "ch_1", credit: null });
    assert.deepEqual(due, {
      outcome: "refund_due",
      payment: payment("pay_1", { status: "refund_due", telegramChargeId: "ch_1" }),
    });
    assert.equal((await store.settlePayment(credit("pay_1", "ch_1"))).outcome, "duplicate");
    await store.cancelPayment("pay_2");
    assert.deepEqual(await store.settlePayment(credit("pay_2", "ch_2")), {
      outcome: "refund_due",
      payment: payment("pay_2", { status: "refund_due", telegramChargeId: "ch_2" }),
    });
    await store.updateKey({ ...(await store.getKey("key_a"))!, revoked: true });
    assert.deepEqual(await store.settlePayment(credit("pay_3", null)), {
      outcome: "refund_due",
      payment: payment("pay_3", { status: "refund_due" }),
    });
    assert.deepEqual(await money(store), [50n, 0n, 50n]);
    assert.equal((await store.listLedger("key_a")).length, 1);
    assert.deepEqual(
      (await store.listPayments({ status: "refund_due", limit: 10 })).map((p) => p.id).sort(),
      ["pay_1", "pay_2", "pay_3"],
    );
  });

  test("settlePayment: processes settling at once — one payment, or one charge id on two payments — credit exactly once", async (ctx) => {
    const { store } = ctx;
    const other = await ctx.open();
    await ownedKey(store);
    for (let round = 0; round < 3; round++) {
      // One payment settled three times at once, with its charge id or none (a manual confirmation).
      const a = `pay_${round}a`;
      await store.createPayment(payment(a));
      const once = await Promise.all([
        store.settlePayment(credit(a, `ch_${round}a`)),
        other.settlePayment(credit(a, `ch_${round}a`)),
        other.settlePayment(credit(a, null)),
      ]);
      assert.deepEqual(
        once.map((r) => r.outcome).sort(),
        ["credited", "duplicate", "duplicate"],
        `round ${round}`,
      );
      // Two payments with one charge id at once.
      const [b, c] = [`pay_${round}b`, `pay_${round}c`];
      await store.createPayment(payment(b));
      await store.createPayment(payment(c));
      const charged = await Promise.all([
        store.settlePayment(credit(b, `ch_${round}b`)),
        other.settlePayment(credit(c, `ch_${round}b`)),
      ]);
      assert.deepEqual(charged.map((r) => r.outcome).sort(), ["credited", "duplicate"], `round ${round}`);
      const winner = charged.find((r) => r.outcome === "credited")!.payment;
      assert.deepEqual(
        charged.map((r) => r.payment),
        [winner, winner],
        "the duplicate names the settled payment",
      );
    }
    // The first purchase at once from two processes: one key, one credit.
    await store.createPayment(payment("pay_new", { keyId: null }));
    const firsts = await Promise.all([
      store.settlePayment(firstPurchase("pay_new", "ch_new", "key_x")),
      other.settlePayment(firstPurchase("pay_new", "ch_new", "key_y")),
    ]);
    assert.deepEqual(firsts.map((r) => r.outcome).sort(), ["credited", "duplicate"]);
    const keyId = firsts.find((r) => r.outcome === "credited")!.payment.keyId!;
    assert.deepEqual(firsts.map((r) => r.payment.keyId), [keyId, keyId]);
    assert.equal(await store.getKey(keyId === "key_x" ? "key_y" : "key_x"), null);
    assert.deepEqual(await money(store), [50n + 6n * 100n, 0n, 650n]);
    assert.equal((await store.listLedger("key_a")).length, 7);
  });

  test("refundPayment: debits the credit with its entry once; refused while the free credit (leases counted) cannot cover it", async (ctx) => {
    const { store } = ctx;
    await ownedKey(store);
    await store.createPayment(payment("pay_1"));
    await store.settlePayment(credit("pay_1", "ch_1"));
    const debit = entry("key_a", "le_r1", 100n, {
      kind: "debit",
      reference: "refund:pay_1",
      createdAt: T + 5,
    });

    // 150 credited, 120 leased by another process: 30 free.
    await take(store, "key_a", "h_other", T, 120n);
    assert.deepEqual(await store.refundPayment("pay_1", debit, T + 5), {
      outcome: "insufficient",
      payment: payment("pay_1", { status: "credited", telegramChargeId: "ch_1" }),
    });
    // Once the lease has expired (its holder died), the credit is free again.
    const refunded = payment("pay_1", { status: "refunded", telegramChargeId: "ch_1" });
    const other = await ctx.open();
    const both = await Promise.all([
      store.refundPayment("pay_1", debit, T + 5_000),
      other.refundPayment("pay_1", { ...debit, id: "le_r2" }, T + 5_000),
    ]);
    assert.deepEqual(
      both.map((r) => r.outcome).sort(),
      ["not_refundable", "refunded"],
      "two at once: one debits",
    );
    assert.deepEqual(both.find((r) => r.outcome === "refunded")!.payment, refunded);
    assert.deepEqual(await money(store), [50n, 0n, 50n]);
    assert.deepEqual((await store.listLedger("key_a")).map((e) => [e.kind, e.amountUsd, e.reference]), [
      ["credit", 50n, "payment:pay_0"],
      ["credit", 100n, "payment:pay_1"],
      ["debit", 100n, "refund:pay_1"],
    ]);
    assert.deepEqual(await store.getPayment("pay_1"), refunded);
    assert.equal((await store.refundPayment("pay_1", debit, T + 6_000)).outcome, "not_refundable");
    await assert.rejects(store.refundPayment("pay_x", debit, T), /unknown payment/);
  });

  test("refundPayment: spent credit is not refundable; refund_due needs no money; pending is not refundable", async ({ store }) => {
    await store.createPackage(pkg("pkg_a"));
    // key_s: 100 credited by pay_1, 60 of it spent.
    await store.createPayment(payment("pay_1", { keyId: null }));
    await store.settlePayment({
      paymentId: "pay_1",
      telegramChargeId: null,
      credit: {
        entry: entry("key_s", "le_1", 100n),
        newKey: keyRecord("key_s", { credited: 100n, spent: 60n, balance: 40n }),
      },
    });
    const debit = entry("key_s", "le_r", 100n, { kind: "debit" });
    assert.equal((await store.refundPayment("pay_1", debit, T)).outcome, "insufficient");
    assert.deepEqual(await money(store, "key_s"), [100n, 60n, 40n]);

    await store.createPayment(payment("pay_2"));
    assert.equal((await store.refundPayment("pay_2", debit, T)).outcome, "not_refundable");
    await store.settlePayment({ paymentId: "pay_2", telegramChargeId: "ch_2", credit: null });
    assert.deepEqual(await store.refundPayment("pay_2", debit, T), {
      outcome: "refunded",
      payment: payment("pay_2", { status: "refunded", telegramChargeId: "ch_2" }),
    });
    assert.deepEqual(await store.listLedger("key_a"), [], "no money moved, no entry");
    assert.deepEqual(await money(store, "key_s"), [100n, 60n, 40n]);
  });

  test("refundPayment: exact over 2^64 pico-USD, against credits landing at once", async (ctx) => {
    const { store } = ctx;
    const big = 3n * 10n ** 25n + 123_456_789n; // beyond one 64-bit KV limb
    await store.createPackage(pkg("pkg_a"));
    await store.createPayment(payment("pay_1", { keyId: null, creditUsd: big }));
    await store.settlePayment({
      paymentId: "pay_1",
      telegramChargeId: null,
      credit: {
        entry: entry("key_b", "le_1", big),
        newKey: keyRecord("key_b", { credited: big, balance: big }),
      },
    });
    const other = await ctx.open();
    const credits = Array.from(
      { length: 8 },
      (_, i) => other.creditKey(entry("key_b", `le_c${i}`, 2n ** 40n + 1n)),
    );
    const r = await store.refundPayment("pay_1", entry("key_b", "le_r", big, { kind: "debit" }), T);
    await Promise.all(credits);
    assert.equal(r.outcome, "refunded");
    assert.deepEqual(await money(store, "key_b"), [8n * (2n ** 40n + 1n), 0n, 8n * (2n ** 40n + 1n)]);
  });

  test("settlePayment and refundPayment: funded keys' counters are only ever added to or debited whole", async ({ store }) => {
    // A key created outside the shop keeps its money through another key's payments.
    await store.createKey(funded("key_o", 1_000n));
    await ownedKey(store);
    await store.createPayment(payment("pay_1"));
    await store.settlePayment(credit("pay_1", null));
    await store.refundPayment("pay_1", entry("key_a", "le_r", 100n, { kind: "debit" }), T);
    assert.deepEqual(await money(store, "key_o"), [1_000n, 0n, 1_000n]);
    assert.deepEqual(await money(store), [50n, 0n, 50n]);
  });
}
