/**
 * The Store contract of backups (store.ts BackupStore), one suite for every backend (kv_store_test.ts on an
 * in-memory KV, pg_store_test.ts on Postgres): a store filled through its normal methods, read as a snapshot
 * and written as a backup file, restored into a fresh empty store of the same backend and of the other one,
 * reads back everything as it was — money, ledger, usage and its hours, the shop's records, payments and their
 * charge ids, owners, files, the tariff. The copy through a file is given by the test file (the backup layer
 * sits above the store: scripts/check_layers.ts).
 */
import assert from "node:assert/strict";
import type { Store } from "../store.ts";
import { KvStore } from "../kv_store.ts";
import { PgStore } from "../pg_store.ts";
import { freshSchema, TEST_DATABASE_URL } from "./pg_test_schema.ts";
import type { StoreBackend } from "./store_contract.ts";
import { batchId, bytes, file, keyRecord, usageRow } from "./test_fixtures.ts";
import { HOUR, T } from "./lease_fixtures.ts";
import { entry, pkg } from "./shop_contract.ts";
import { payment } from "./payment_contract.ts";
import type { PaymentStatus } from "../shop_types.ts";

/** Copies `from` (a store of backend `source`) into the empty `to` through a backup file, the snapshot read at
 *  `snapshotNow` and restored at `restoreNow` (src/backup/testing/backup_file.ts copyThroughFile). */
export type CopyStore = (
  from: Store,
  source: string,
  to: Store,
  snapshotNow: number,
  restoreNow: number,
) => Promise<{ written: Record<string, number>; expiredFiles: number }>;

/** Deno KV in memory: a fresh store per location (it cannot be opened twice). */
export const memoryKv: StoreBackend = {
  name: "kv",
  fresh: () => Promise.resolve({ open: () => KvStore.open(":memory:"), remove: () => Promise.resolve() }),
};

/** Postgres in a fresh schema per location. */
export const postgresSchemas: StoreBackend = {
  name: "postgres",
  ...(TEST_DATABASE_URL ? {} : { skip: "TEST_DATABASE_URL unset" }),
  async fresh() {
    const schema = await freshSchema();
    return { open: () => PgStore.open(schema.url), remove: schema.drop };
  },
};

/** A store on a fresh location of `backend`, closed and removed when disposed. */
async function opened(backend: StoreBackend): Promise<{ store: Store } & AsyncDisposable> {
  const where = await backend.fresh();
  try {
    const store = await where.open();
    return {
      store,
      async [Symbol.asyncDispose]() {
        await store.close();
        await where.remove();
      },
    };
  } catch (err) {
    await where.remove();
    throw err;
  }
}

const KEYS = ["key_a", "key_b", "key_m", "key_n"];
const CHATS = [7, 8, 9];
const STATUSES: PaymentStatus[] = ["pending", "credited", "refund_due", "refunded", "cancelled"];
const QUOTA = { maxFiles: 10, maxBytes: 10_000_000 };
const TARIFF = [
  { model: "k3", input: "1.00", cacheRead: "0.10", output: "4.00", memberDiscount: true },
  {
    model: "t1",
    aboveInputTokens: 200_000,
    input: "2.50",
    output: "10.00",
    search: { usd: "0.01", per: "request" as const },
  },
];
/** Every byte value, so base64 and bytea carry all of them. */
const DATA = new Uint8Array(600).map((_, i) => (i * 7) % 256);
const SECTIONS = [{ text: "Глава 1\nстрока «два»", anchor: "p1" }, { text: "", anchor: "p2#x" }];

/** A key record whose hash is 64 hex digits, as a real key's SHA-256 (a backup refuses any other). */
const realKey = (id: string, over: Parameters<typeof keyRecord>[1] = {}) =>
  keyRecord(id, {
    hash: Array.from(bytes(id), (b) => b.toString(16).padStart(2, "0")).join("").padEnd(64, "0"),
    ...over,
  });

/**
 * Fills `store` through its normal methods with one of every record a backup holds; `now` is the files' clock.
 * key_a: created with its initial entry, topped up, charged, topped up by a payment (ch_top), two files;
 * key_b: revoked and suspended, charged and credited by commits; key_n: a first purchase of chat 7 (ch_new),
 * a second payment refunded (ch_ref); key_m: a manual first purchase of chat 8 with no charge id.
 */
async function fill(store: Store, now: number): Promise<void> {
  await store.putTariff(TARIFF);
  await store.updatePaymentMethod("manual", { available: true, details: "Счёт 40817810000000000001" });
  await store.updatePaymentMethod("stars", { title: "Звёзды" });
  await store.createPackage(pkg("pkg_a"));
  await store.createPackage(
    pkg("pkg_b", { active: false, creditUsd: 10n ** 26n, currency: "RUB", price: 99_900 }),
  );

  await store.createKey(
    realKey("key_a", {
      name: "Ключ А",
      createdAt: T,
      credited: 500n,
      balance: 500n,
      expiresAt: T + 100 * HOUR,
      membership: "private",
      families: { theta: { paused: true, hourlyRequests: 5, dailyRequests: null } },
      caps: { hourlySpend: 50n, dailySpend: null, hourlyReserve: 7n, dailyReserve: 10n ** 30n },
    }),
    entry("key_a", "le_init", 500n, { reference: "initial" }),
  );
  await store.createKey(realKey("key_b", { revoked: true, suspendedUntil: T + HOUR, createdAt: T + 1 }));
  assert.equal(await store.creditKey(entry("key_a", "le_top", 250n, { createdAt: T + 1 })), true);
  const rows = [
    usageRow("req_1", "key_a", { createdAt: T - 2 * HOUR, charged: 10n }),
    usageRow("req_2", "key_a", {
      createdAt: T - 2 * HOUR + 5,
      charged: 12n,
      model: "k3-mini",
      stream: false,
    }),
    usageRow("req_3", "key_a", {
      createdAt: T,
      family: "beta",
      model: "b2",
      charged: 15n,
      webSearchRequests: 2,
      searchFee: 4n,
      servedModel: "b2-2026",
      usageSource: "estimated",
      status: "cancelled",
      writtenOff: 3n,
    }),
    usageRow("req_4", "key_a", {
      createdAt: T,
      charged: 0n,
      status: "error",
      inputTokens: 0,
      outputTokens: 0,
    }),
    usageRow("req_5", "key_a", { createdAt: T + HOUR, charged: 10n ** 20n, cachedInputTokens: 9 }),
    usageRow("req_6", "key_b", { createdAt: T, charged: 5n }),
  ];
  await store.commit({
    id: batchId(),
    money: [{ keyId: "key_a", spent: 37n, credited: 0n }, { keyId: "key_b", spent: 5n, credited: 0n }],
    usage: rows.slice(0, 4).concat(rows[5]!),
  });
  await store.commit({
    id: batchId(),
    money: [{ keyId: "key_a", spent: 10n ** 20n, credited: 0n }, {
      keyId: "key_b",
      spent: 0n,
      credited: 20n,
    }],
    usage: [rows[4]!],
  });

  const firstPurchase = (id: string, keyId: string, charge: string | null) =>
    store.settlePayment({
      paymentId: id,
      telegramChargeId: charge,
      credit: {
        entry: entry(keyId, `le_${id}`, 100n, { reference: `payment:${id}`, createdAt: T + 10 }),
        newKey: realKey(keyId, { credited: 100n, balance: 100n, createdAt: T + 10 }),
      },
    });
  const topUp = (id: string, keyId: string, charge: string | null) =>
    store.settlePayment({
      paymentId: id,
      telegramChargeId: charge,
      credit: { entry: entry(keyId, `le_${id}`, 100n, { reference: `payment:${id}`, createdAt: T + 11 }) },
    });
  await store.createPayment(payment("pay_new", { keyId: null, createdAt: T + 10 }));
  assert.equal((await firstPurchase("pay_new", "key_n", "ch_new")).outcome, "credited");
  await store.createPayment(
    payment("pay_new2", { keyId: null, chatId: 8, methodId: "manual", createdAt: T + 10 }),
  );
  assert.equal((await firstPurchase("pay_new2", "key_m", null)).outcome, "credited");
  await store.createPayment(payment("pay_top", { keyId: "key_a", chatId: 8, createdAt: T + 11 }));
  assert.equal((await topUp("pay_top", "key_a", "ch_top")).outcome, "credited");
  await store.createPayment(payment("pay_ref", { keyId: "key_n", createdAt: T + 12 }));
  assert.equal((await topUp("pay_ref", "key_n", "ch_ref")).outcome, "credited");
  const refund = entry("key_n", "le_refund", 100n, {
    kind: "debit",
    reference: "refund:pay_ref",
    createdAt: T + 13,
  });
  assert.equal((await store.refundPayment("pay_ref", refund, T + 13)).outcome, "refunded");
  await store.createPayment(payment("pay_pend", { chatId: 9, createdAt: T + 14 }));
  await store.createPayment(payment("pay_canc", { createdAt: T + 15 }));
  assert.equal((await store.cancelPayment("pay_canc"))?.status, "cancelled");
  await store.createPayment(payment("pay_due", { keyId: "key_a", methodId: "manual", createdAt: T + 16 }));
  const due = await store.settlePayment({ paymentId: "pay_due", telegramChargeId: null, credit: null });
  assert.equal(due.outcome, "refund_due");
  const alerted = await store.updateKeyOwner("key_n", (o) => ({ ...o, alertThreshold: 30n, alerted: true }));
  assert.equal(alerted?.alerted, true);

  const put = (f: ReturnType<typeof file>, data: Uint8Array, sections: unknown[]) =>
    store.putFile(f, data, bytes(JSON.stringify(sections)), QUOTA);
  assert.equal(
    await put(file("file_1", "key_a", now, { filename: "отчёт «q1».pdf", bytes: 600 }), DATA, SECTIONS),
    "ok",
  );
  assert.equal(
    await put(file("file_2", "key_a", now + 1, { bytes: 0, storedBytes: 2 }), new Uint8Array(0), []),
    "ok",
  );
  assert.equal(
    await put(file("file_3", "key_n", now + 2), bytes("abc"), [{ text: "abc", anchor: "" }]),
    "ok",
  );
}

/** A key's usage report read page by page (two rows a page): its rows, and each page's cursors if `cursors`. */
async function usagePages(store: Store, keyId: string, cursors: boolean): Promise<unknown[]> {
  const pages: unknown[] = [];
  let after: string | undefined;
  do {
    const page = await store.listUsage(keyId, { limit: 2, after });
    pages.push(cursors ? page : { rows: page.rows, more: page.next !== undefined });
    after = page.next;
  } while (after !== undefined && pages.length < 100);
  return pages;
}

/** Every read a backup covers, of `store` at `now` (cursors are a backend's own: compared within one). */
async function reads(store: Store, now: number, cursors: boolean): Promise<Record<string, unknown>> {
  const keys = await store.listKeys();
  const out: Record<string, unknown> = {
    keys,
    byHash: await Promise.all(keys.map((k) => store.getKeyByHash(k.hash))),
    packages: await store.listPackages(),
    methods: await store.listPaymentMethods(),
    payments: await store.listPayments({ limit: 100 }),
    owners: await store.listKeyOwners(),
    tariff: await store.getTariff(),
  };
  for (const s of STATUSES) out[`payments ${s}`] = await store.listPayments({ status: s, limit: 100 });
  for (const c of CHATS) {
    out[`payments of ${c}`] = await store.listPayments({ chatId: c, limit: 100 });
    out[`pending of ${c}`] = await store.listPayments({ chatId: c, status: "pending", limit: 100 });
    out[`owners of ${c}`] = await store.listKeyOwners(c);
  }
  for (const p of out.payments as { id: string }[]) out[`payment ${p.id}`] = await store.getPayment(p.id);
  for (const id of KEYS) {
    out[`ledger ${id}`] = await store.listLedger(id);
    out[`usage ${id}`] = await usagePages(store, id, cursors);
    out[`hours ${id}`] = await store.usageHours(id, 0, T + 100 * HOUR);
    const files = await store.listFiles(id, now);
    out[`files ${id}`] = files;
    for (const f of files) {
      out[`data ${f.id}`] = await store.getFileData(f);
      out[`sections ${f.id}`] = await store.getFileSections(f);
    }
  }
  return out;
}

/** Registers the round trip of `from` into a fresh store of `into`. */
function roundTripTest(from: StoreBackend, into: StoreBackend, copy: CopyStore): void {
  const skip = from.skip ?? into.skip;
  Deno.test({
    name:
      `${from.name} store: backup: restored into a fresh ${into.name} store, every read is the source's; ` +
      `a settled charge id stays a duplicate${skip ? ` [skipped: ${skip}]` : ""}`,
    ignore: skip !== undefined,
    async fn() {
      await using source = await opened(from);
      await using target = await opened(into);
      const now = Date.now();
      await fill(source.store, now);
      const before = await reads(source.store, now, from === into);
      // What the fill wrote, so an empty copy of an empty store cannot pass.
      const keys = before.keys as { id: string; credited: bigint; spent: bigint; balance: bigint }[];
      assert.deepEqual(keys.map((k) => [k.id, k.credited, k.spent, k.balance]), [
        ["key_a", 850n, 10n ** 20n + 37n, 850n - 10n ** 20n - 37n],
        ["key_b", 20n, 5n, 15n],
        ["key_m", 100n, 0n, 100n],
        ["key_n", 100n, 0n, 100n],
      ]);
      assert.deepEqual((before.payments as { id: string; status: string }[]).map((p) => [p.id, p.status]), [
        ["pay_due", "refund_due"],
        ["pay_canc", "cancelled"],
        ["pay_pend", "pending"],
        ["pay_ref", "refunded"],
        ["pay_top", "credited"],
        ["pay_new2", "credited"],
        ["pay_new", "credited"],
      ]);

      assert.equal(await target.store.isEmptyForRestore(), true);
      const result = await copy(source.store, from.name, target.store, now, now);
      assert.deepEqual(result, {
        written: {
          tariff: 1,
          payment_method: 2,
          package: 2,
          key: 4,
          ledger: 7,
          owner: 2,
          usage: 6,
          file: 3,
          payment: 7,
        },
        expiredFiles: 0,
      });
      const after = await reads(target.store, now, from === into);
      for (const what of Object.keys(before)) assert.deepEqual(after[what], before[what], what);
      assert.deepEqual(Object.keys(after), Object.keys(before));
      assert.equal(await target.store.isEmptyForRestore(), false);

      // A charge id settled before the backup still pays nothing twice on the restored store.
      const restored = target.store;
      await restored.createPayment(payment("pay_again", { keyId: "key_a", createdAt: T + 20 }));
      const again = await restored.settlePayment({
        paymentId: "pay_again",
        telegramChargeId: "ch_top",
        credit: { entry: entry("key_a", "le_again", 100n, { reference: "payment:pay_again" }) },
      });
      assert.equal(again.outcome, "duplicate");
      assert.equal((await restored.getPayment("pay_again"))?.status, "pending");
      assert.deepEqual(await restored.getKey("key_a"), keys[0]);
      assert.deepEqual(await restored.listLedger("key_a"), before["ledger key_a"]);
    },
  });
}

export function backupContract(backend: StoreBackend, other: StoreBackend, copy: CopyStore): void {
  roundTripTest(backend, backend, copy);
  roundTripTest(backend, other, copy);
  const test = (name: string, fn: () => Promise<void>) =>
    Deno.test({
      name: `${backend.name} store: backup: ${name}${backend.skip ? ` [skipped: ${backend.skip}]` : ""}`,
      ignore: backend.skip !== undefined,
      fn,
    });

  test("isEmptyForRestore: true on a fresh store (the tariff and payment methods aside), false with any one record", async () => {
    {
      await using fresh = await opened(backend);
      assert.equal(await fresh.store.isEmptyForRestore(), true);
      await fresh.store.putTariff(TARIFF);
      await fresh.store.updatePaymentMethod("manual", { available: true, details: "x" });
      assert.equal(
        await fresh.store.isEmptyForRestore(),
        true,
        "the tariff and the seeded methods do not count",
      );
    }
    const kinds: Record<string, (s: Store) => Promise<unknown>> = {
      key: (s) => s.createKey(realKey("key_a")),
      "usage row": (s) => s.commit({ id: batchId(), money: [], usage: [usageRow("req_a", "key_a")] }),
      "ledger entry": (s) => s.restoreLedgerEntries([entry("key_a", "le_1", 5n)]),
      package: (s) => s.createPackage(pkg("pkg_a")),
      payment: (s) => s.createPayment(payment("pay_1")),
      owner: (s) =>
        s.restoreKeyOwners([{
          keyId: "key_a",
          chatId: 7,
          alertThreshold: null,
          lastCreditUsd: 5n,
          alerted: false,
        }]),
      file: (s) => s.putFile(file("file_1", "key_a", Date.now()), bytes("abc"), bytes("[]"), QUOTA),
    };
    for (const [kind, write] of Object.entries(kinds)) {
      await using one = await opened(backend);
      await write(one.store);
      assert.equal(await one.store.isEmptyForRestore(), false, kind);
    }
  });

  test("a file expired by the restore's now is left out; the live one is restored with its bytes", async () => {
    await using source = await opened(backend);
    await using target = await opened(backend);
    const now = Date.now();
    const soon = file("file_soon", "key_a", now);
    const late = file("file_late", "key_a", now + 1, { expiresAt: now + 2 * HOUR });
    await source.store.createKey(realKey("key_a"));
    assert.equal(await source.store.putFile(soon, bytes("abc"), bytes("[]"), QUOTA), "ok");
    assert.equal(await source.store.putFile(late, DATA, bytes(JSON.stringify(SECTIONS)), QUOTA), "ok");
    const restoreNow = soon.expiresAt;
    const result = await copy(source.store, backend.name, target.store, now, restoreNow);
    assert.deepEqual(result, { written: { payment_method: 2, key: 1, file: 1 }, expiredFiles: 1 });
    assert.deepEqual(await target.store.listFiles("key_a", restoreNow), [late]);
    assert.deepEqual(await target.store.getFileData(late), DATA);
    assert.deepEqual(await target.store.getFileSections(late), SECTIONS);
  });
}
