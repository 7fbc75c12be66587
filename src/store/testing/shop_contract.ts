/**
 * The Store contract of the key shop's catalog and bookkeeping (shop_store.ts: packages, payment methods, key
 * owners, the lookup by hint, rotation, seen updates, key creation and top-ups with their ledger entries), one
 * suite for every backend, registered beside the others in kv_store_test.ts and pg_store_test.ts. The money
 * steps of payments are in payment_contract.ts.
 */
import assert from "node:assert/strict";
import { contractTest, type StoreBackend } from "./store_contract.ts";
import { funded, T } from "./lease_fixtures.ts";
import { keyRecord } from "./test_fixtures.ts";
import { type KeyOwner, type LedgerEntry, type Package, SEED_PAYMENT_METHODS } from "../shop_types.ts";

const USD = 1_000_000_000_000n;

export const pkg = (id: string, over: Partial<Package> = {}): Package => ({
  id,
  name: `Пакет ${id}`,
  creditUsd: 10n * USD,
  price: 500,
  currency: "XTR",
  active: true,
  ...over,
});

export const entry = (
  keyId: string,
  id: string,
  amountUsd: bigint,
  over: Partial<LedgerEntry> = {},
): LedgerEntry => ({
  id,
  keyId,
  kind: "credit",
  amountUsd,
  reference: "admin:topup",
  createdAt: T,
  ...over,
});

export function shopContract(backend: StoreBackend): void {
  const test = contractTest(backend);

  test("shop: packages are created once, read back, patched field by field, seen by another process", async (ctx) => {
    const { store } = ctx;
    assert.deepEqual(await store.listPackages(), []);
    await store.createPackage(pkg("pkg_b"));
    await store.createPackage(pkg("pkg_a", { creditUsd: 10n ** 26n, currency: "RUB", price: 1_000_000_000 }));
    await assert.rejects(store.createPackage(pkg("pkg_a")), /exists/);
    assert.deepEqual(await store.listPackages(), [
      pkg("pkg_a", { creditUsd: 10n ** 26n, currency: "RUB", price: 1_000_000_000 }),
      pkg("pkg_b"),
    ]);
    assert.deepEqual(
      await store.updatePackage("pkg_b", { active: false, price: 700 }),
      pkg("pkg_b", { active: false, price: 700 }),
    );
    assert.deepEqual(await store.updatePackage("pkg_b", {}), pkg("pkg_b", { active: false, price: 700 }));
    assert.equal(await store.updatePackage("pkg_x", { active: false }), null);
    const other = await ctx.open();
    assert.deepEqual(await other.getPackage("pkg_b"), pkg("pkg_b", { active: false, price: 700 }));
    assert.equal(await other.getPackage("pkg_x"), null);
    assert.deepEqual((await (await ctx.reopen()).listPackages()).map((p) => p.id), ["pkg_a", "pkg_b"]);
  });

  test("shop: a fresh store has the seeded payment methods; a change is kept and seen by another process", async (ctx) => {
    const seeded = [...SEED_PAYMENT_METHODS].sort((a, b) => a.id < b.id ? -1 : 1);
    assert.deepEqual(await ctx.store.listPaymentMethods(), seeded);
    assert.deepEqual(seeded.map((m) => [m.id, m.kind, m.available, m.details]), [
      ["manual", "manual", false, null],
      ["stars", "stars", true, null],
    ]);
    const manual = { ...SEED_PAYMENT_METHODS[1]!, available: true, details: "Карта 0000 0000 0000 0000" };
    assert.deepEqual(
      await ctx.store.updatePaymentMethod("manual", { available: true, details: manual.details }),
      manual,
    );
    assert.deepEqual(await ctx.store.updatePaymentMethod("stars", { available: false }), {
      ...SEED_PAYMENT_METHODS[0]!,
      available: false,
    });
    assert.equal(await ctx.store.updatePaymentMethod("card", { available: true }), null);
    assert.equal(await ctx.store.getPaymentMethod("card"), null);
    const other = await ctx.open();
    assert.deepEqual(await other.getPaymentMethod("manual"), manual);
    assert.deepEqual(
      await other.updatePaymentMethod("manual", { details: null }),
      { ...manual, details: null },
    );
    const reopened = await ctx.reopen();
    assert.deepEqual(await reopened.listPaymentMethods(), await other.listPaymentMethods());
    assert.deepEqual(
      (await reopened.listPaymentMethods()).map((m) => [m.id, m.available]),
      [["manual", true], ["stars", false]],
    );
  });

  test("shop: createKey writes its initial entry in the same step; creditKey adds to the counter with its entry", async ({ store }) => {
    await store.createKey(funded("key_a", 100n), entry("key_a", "le_1", 100n, { reference: "initial" }));
    await store.createKey(funded("key_b", 0n));
    assert.equal(await store.creditKey(entry("key_a", "le_2", 25n, { createdAt: T + 1 })), true);
    assert.equal(await store.creditKey(entry("key_x", "le_3", 25n)), false, "unknown key: nothing written");
    const a = (await store.getKey("key_a"))!;
    assert.deepEqual([a.credited, a.spent, a.balance], [125n, 0n, 125n]);
    assert.deepEqual(await store.listLedger("key_a"), [
      entry("key_a", "le_1", 100n, { reference: "initial" }),
      entry("key_a", "le_2", 25n, { createdAt: T + 1 }),
    ]);
    assert.deepEqual(await store.listLedger("key_b"), []);
    assert.deepEqual(await store.listLedger("key_x"), []);
    await assert.rejects(store.creditKey(entry("key_a", "le_4", 1n, { kind: "debit" })), RangeError);
    // A key whose id exists is refused whole: no second entry either.
    await assert.rejects(store.createKey(funded("key_a", 5n), entry("key_a", "le_5", 5n)));
    assert.equal((await store.listLedger("key_a")).length, 2);
  });

  test("shop: key owners by chat, updated in one step that only one of two processes wins", async (ctx) => {
    const { store } = ctx;
    assert.equal(await store.getKeyOwner("key_a"), null);
    assert.equal(await store.updateKeyOwner("key_a", (o) => o), null, "no owner: nothing");
    // Owners come from a first purchase (payment_contract.ts); here through the settlement too.
    await store.createPackage(pkg("pkg_a"));
    for (const [id, chat] of [["a", 7], ["b", 7], ["c", -100]] as const) {
      await store.createPayment({
        id: `pay_${id}`,
        chatId: chat,
        packageId: "pkg_a",
        methodId: "manual",
        keyId: null,
        creditUsd: 10n,
        price: 500,
        currency: "XTR",
        status: "pending",
        telegramChargeId: null,
        createdAt: T,
      });
      await store.settlePayment({
        paymentId: `pay_${id}`,
        telegramChargeId: null,
        credit: {
          entry: entry(`key_${id}`, `le_${id}`, 10n, { reference: `payment:pay_${id}` }),
          newKey: keyRecord(`key_${id}`, {
            hash: `hash_${id}`,
            hint: `gd-${id}`,
            credited: 10n,
            balance: 10n,
          }),
        },
      });
    }
    const owner = (keyId: string, chatId: number, over: Partial<KeyOwner> = {}): KeyOwner => ({
      keyId,
      chatId,
      alertThreshold: null,
      lastCreditUsd: 10n,
      alerted: false,
      ...over,
    });
    assert.deepEqual(await store.listKeyOwners(7), [owner("key_a", 7), owner("key_b", 7)]);
    assert.deepEqual(await store.listKeyOwners(-100), [owner("key_c", -100)]);
    assert.deepEqual(await store.listKeyOwners(8), []);
    assert.deepEqual(
      (await store.listKeyOwners()).map((o) => o.keyId).sort(),
      ["key_a", "key_b", "key_c"],
    );
    assert.deepEqual(
      await store.updateKeyOwner("key_a", (o) => ({ ...o, alertThreshold: 3n, chatId: 99, keyId: "key_z" })),
      owner("key_a", 7, { alertThreshold: 3n }),
      "the owner's key and chat are not the change's to move",
    );
    assert.equal(await store.updateKeyOwner("key_a", () => null), null, "null: nothing written");

    const other = await ctx.open();
    const mark = (s: typeof store) =>
      s.updateKeyOwner("key_a", (o) => o.alerted ? null : { ...o, alerted: true });
    for (let round = 0; round < 5; round++) {
      const won = (await Promise.all([mark(store), mark(other), mark(store), mark(other)])).filter((o) => o);
      assert.equal(won.length, 1, "exactly one caller sets the mark");
      await store.updateKeyOwner("key_a", (o) => ({ ...o, alerted: false }));
    }
    assert.deepEqual(await other.getKeyOwner("key_a"), owner("key_a", 7, { alertThreshold: 3n }));
  });

  test("shop: keys by hint", async ({ store }) => {
    await store.createKey(keyRecord("key_a", { hash: "h_a", hint: "gd-AAAA…" }));
    await store.createKey(keyRecord("key_b", { hash: "h_b", hint: "gd-AAAA…" }));
    await store.createKey(keyRecord("key_c", { hash: "h_c", hint: "gd-BBBB…" }));
    assert.deepEqual((await store.keyIdsByHint("gd-AAAA…")).sort(), ["key_a", "key_b"]);
    assert.deepEqual(await store.keyIdsByHint("gd-BBBB…"), ["key_c"]);
    assert.deepEqual(await store.keyIdsByHint("gd-CCCC…"), []);
  });

  test("shop: rotateKeyHash swaps the hash and its lookup at once; updateKey never brings the old one back", async (ctx) => {
    const { store } = ctx;
    await store.createKey(funded("key_a", 100n));
    const before = (await store.getKey("key_a"))!;
    const since = Date.now() - 1;
    assert.equal(await store.rotateKeyHash("key_a", "hash_key_a", { hash: "h2", hint: "gd-new…" }), true);
    const after = { ...before, hash: "h2", hint: "gd-new…" };
    assert.deepEqual(await store.getKey("key_a"), after, "money and settings kept");
    assert.equal(await store.getKeyByHash("hash_key_a"), null);
    assert.deepEqual(await store.getKeyByHash("h2"), after);
    assert.deepEqual(
      (await store.keyChanges(since)).find((r) => r.id === "key_a"),
      after,
      "stamped as a change",
    );
    assert.equal(
      await store.rotateKeyHash("key_a", "hash_key_a", { hash: "h3", hint: "x" }),
      false,
      "stale hash",
    );
    assert.equal(await store.rotateKeyHash("key_x", "hash_key_x", { hash: "h4", hint: "x" }), false);
    // A process that still holds the record with the old hash writes its metadata: the hash stays the new one.
    const other = await ctx.open();
    await other.updateKey({ ...before, name: "renamed" });
    assert.deepEqual(await store.getKey("key_a"), { ...after, name: "renamed" });
    assert.equal(await store.getKeyByHash("hash_key_a"), null);
    assert.deepEqual(await (await ctx.reopen()).getKeyByHash("h2"), { ...after, name: "renamed" });
  });

  test("shop: firstSeen is true once per update id until it expires, for every process", async (ctx) => {
    const other = await ctx.open();
    const ttl = 24 * 3_600_000;
    assert.equal(await ctx.store.firstSeen(1001, T, ttl), true);
    assert.equal(await ctx.store.firstSeen(1001, T + 1, ttl), false);
    assert.equal(await other.firstSeen(1001, T + ttl - 1, ttl), false);
    assert.equal(await other.firstSeen(1002, T, ttl), true);
    const both = await Promise.all([ctx.store.firstSeen(1003, T, ttl), other.firstSeen(1003, T, ttl)]);
    assert.deepEqual(both.sort(), [false, true], "two processes at once: one is first");
    // Memory of an id ends with its lifetime (the store's own expiry may lag: `now` decides).
    assert.equal(await ctx.store.firstSeen(1001, T + ttl, ttl), true);
    assert.equal(await ctx.store.firstSeen(1001, T + ttl + 1, ttl), false);
  });
}
