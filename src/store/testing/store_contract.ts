/**
 * The Store contract (store.ts), one suite for every backend: kv_store_test.ts runs it on Deno KV,
 * pg_store_test.ts on Postgres; files and expiring sets are in files_contract.ts, the rest in the other
 * *_contract.ts. Each test gets a fresh, empty storage location it may open more than once (a second writer,
 * a reopen); every store it opened is closed and the location removed at the end.
 */
import assert from "node:assert/strict";
import type { Store } from "../store.ts";
import {
  batchId,
  bytes,
  file,
  keyRecord,
  member,
  putMember,
  TEST_SET,
  type TestMember,
  usageRow,
} from "./test_fixtures.ts";
import type { KeyRecord, UsageRow } from "../types.ts";

/** Where one test's store lives. */
export interface StoreLocation {
  open(): Promise<Store>;
  remove(): Promise<void>;
}

export interface StoreBackend<L extends StoreLocation = StoreLocation> {
  name: string;
  /** Why the backend cannot run here (its tests are then registered with `ignore: true`). */
  skip?: string;
  fresh(): Promise<L>;
}

export interface Ctx {
  /** The store the test works on (opened before it starts). */
  store: Store;
  /** Another store on the same location: a second writer. */
  open(): Promise<Store>;
  /** Closes `store` and opens the location again (the new one becomes `store`). */
  reopen(): Promise<Store>;
}

/** Registers one contract test on `backend`: a fresh location, every store it opened closed at the end.
 *  Shared by every contract suite (this one, lease_contract.ts); `fn` is given the location too. */
export function contractTest<L extends StoreLocation>(backend: StoreBackend<L>) {
  return (name: string, fn: (ctx: Ctx, where: L) => Promise<void>) =>
    Deno.test({
      name: `${backend.name} store: ${name}${backend.skip ? ` [skipped: ${backend.skip}]` : ""}`,
      ignore: backend.skip !== undefined,
      async fn() {
        const where = await backend.fresh();
        const live = new Set<Store>();
        const open = async () => {
          const s = await where.open();
          live.add(s);
          return s;
        };
        try {
          const ctx: Ctx = {
            store: await open(),
            open,
            async reopen() {
              live.delete(ctx.store);
              await ctx.store.close();
              return ctx.store = await open();
            },
          };
          await fn(ctx, where);
        } finally {
          for (const s of live) await s.close();
          await where.remove();
        }
      },
    });
}

export function storeContract(backend: StoreBackend): void {
  const test = contractTest(backend);

  test("commit adds money deltas to the counters and writes usage rows", async ({ store }) => {
    await store.createKey(keyRec("key_a", 100n));
    const updated = { ...keyRec("key_a", 60n), credited: 100n, spent: 40n };
    await store.commit({
      id: batchId(),
      money: [{ keyId: "key_a", spent: 40n, credited: 0n }],
      usage: [row("req_1", "key_a", 1_000, 40n)],
    });
    assert.deepEqual(await store.getKey("key_a"), updated);
    assert.deepEqual(await store.listKeys(), [updated]);
    assert.deepEqual((await store.listUsage("key_a", { limit: 10 })).rows, [
      row("req_1", "key_a", 1_000, 40n),
    ]);
    assert.equal(await store.getKey("key_none"), null);
    await assert.rejects(store.createKey(keyRec("key_a", 1n)), /already exists/);
    await assert.rejects(store.createKey({ ...keyRec("key_b", 1n), hash: "hash_key_a" }), /already exists/);
  });

  test("a usage row's served model (theta's fallback) round-trips, and a row without one has none", async (ctx) => {
    await ctx.store.createKey(keyRec("key_a", 100n));
    const served = { ...row("req_s", "key_a", 2_000), servedModel: "theta3.7-max" };
    await ctx.store.commit({
      id: batchId(),
      money: [],
      usage: [row("req_p", "key_a", 1_000), served],
      open: [served],
    });
    const store = await ctx.reopen();
    assert.deepEqual((await store.listUsage("key_a", { limit: 10 })).rows, [
      served,
      row("req_p", "key_a", 1_000),
    ]);
    assert.deepEqual(await store.listOpen(), [served]);
  });

  test("every key field and money far beyond 2^64 round-trip exactly; deltas of one batch add up", async (ctx) => {
    const huge = 10n ** 27n + 123_456_789n; // the API's largest amount, 10^15 USD, plus change
    const rec = keyRecord("key_z", {
      name: "Имя «ключа»",
      createdAt: 1_700_000_000_123,
      revoked: true,
      expiresAt: 1_800_000_000_000,
      suspendedUntil: 1_750_000_000_000,
      families: {
        theta: { paused: true, hourlyRequests: 7, dailyRequests: 0 },
        delta: { paused: false, hourlyRequests: null, dailyRequests: 12 },
      },
      membership: "private",
      balance: huge,
      credited: huge,
      caps: { hourlySpend: 1n, dailySpend: huge, hourlyReserve: null, dailyReserve: 2n ** 70n },
    });
    await ctx.store.createKey(rec);
    await ctx.store.createKey(keyRecord("key_y"));
    await ctx.store.commit({
      id: batchId(),
      money: [
        { keyId: "key_z", spent: 2n ** 65n, credited: 0n },
        { keyId: "key_y", spent: 0n, credited: 7n },
        { keyId: "key_z", spent: 1n, credited: huge },
      ],
      usage: [],
    });
    const spent = 2n ** 65n + 1n;
    const want = { ...rec, credited: 2n * huge, spent, balance: 2n * huge - spent };
    assert.deepEqual(await (await ctx.reopen()).getKey("key_z"), want);
    assert.deepEqual((await ctx.store.listKeys()).map((k) => [k.id, k.balance]), [["key_y", 7n], [
      "key_z",
      want.balance,
    ]]);
  });

  test("updateKey writes metadata only: a stale view of the money cannot overwrite it", async ({ store }) => {
    const rec = keyRec("key_a", 100n);
    await store.createKey(rec);
    await store.commit({ id: batchId(), money: [{ keyId: "key_a", spent: 30n, credited: 5n }], usage: [] });
    const families = { theta: { paused: false, hourlyRequests: 3, dailyRequests: null } };
    await store.updateKey({ ...rec, revoked: true, name: "renamed", families });
    assert.deepEqual(await store.getKey("key_a"), {
      ...rec,
      revoked: true,
      name: "renamed",
      families,
      balance: 75n,
      credited: 105n,
      spent: 30n,
    });
  });

  test("families' settings round-trip as data, a family changed or dropped by updateKey", async (ctx) => {
    const families = {
      theta: { paused: true, hourlyRequests: 5, dailyRequests: 40 },
      alpha: { paused: false, hourlyRequests: null, dailyRequests: null },
    };
    await ctx.store.createKey(keyRecord("key_f", { families }));
    assert.deepEqual((await (await ctx.reopen()).getKey("key_f"))?.families, families);
    const next = { alpha: { paused: true, hourlyRequests: 0, dailyRequests: null } };
    await ctx.store.updateKey({ ...keyRecord("key_f"), families: next });
    assert.deepEqual((await ctx.store.getKeyByHash("hash_key_f"))?.families, next);
    assert.deepEqual((await ctx.store.listKeys()).map((k) => k.families), [next]);
  });

  test("two writers adding spend to the same key both count", async (ctx) => {
    const two = await ctx.open();
    await ctx.store.createKey(keyRec("key_a", 10n ** 20n));
    let expected = 0n;
    const writer = async (store: Store, tag: string) => {
      for (let i = 0; i < 50; i++) {
        // Wide values, so carries (KV limbs) and numeric arithmetic are exercised too.
        const spent = BigInt(i + 1) * 0xffff_ffffn + (tag === "one" ? 1n : 2n ** 40n);
        expected += spent;
        await store.commit({ id: batchId(), money: [{ keyId: "key_a", spent, credited: 0n }], usage: [] });
      }
    };
    await Promise.all([writer(ctx.store, "one"), writer(two, "two")]);
    const rec = (await ctx.store.getKey("key_a"))!;
    assert.equal(rec.spent, expected);
    assert.equal(rec.balance, 10n ** 20n - expected);
    assert.deepEqual((await two.listKeys()).map((r) => r.spent), [expected]);
  });

  test("commit writes drain checkpoints and deletes settled ones with the money", async ({ store }) => {
    await store.createKey(keyRec("key_a", 100n));
    await store.commit({
      id: batchId(),
      money: [],
      usage: [],
      open: [row("req_a", "key_a", 1), row("req_b", "key_a", 2)],
    });
    assert.deepEqual((await store.listOpen()).map((r) => r.requestId), ["req_a", "req_b"]);
    await store.commit({
      id: batchId(),
      money: [{ keyId: "key_a", spent: 10n, credited: 0n }],
      usage: [row("req_a", "key_a", 1, 10n)],
      closed: ["req_a"],
      open: [row("req_b", "key_a", 2, 7n), row("req_c", "key_a", 3)],
    });
    const open = await store.listOpen();
    assert.deepEqual(open.map((r) => r.requestId), ["req_b", "req_c"]);
    assert.deepEqual(
      open[0],
      row("req_b", "key_a", 2, 7n),
      "a checkpoint is overwritten with the latest row",
    );
    assert.equal((await store.getKey("key_a"))!.balance, 90n);
    // Closed and checkpointed again in one batch: the checkpoint (the later write) stays.
    await store.commit({
      id: batchId(),
      money: [],
      usage: [],
      closed: ["req_b", "req_c"],
      open: [row("req_c", "key_a", 3, 9n)],
    });
    assert.deepEqual(await store.listOpen(), [row("req_c", "key_a", 3, 9n)]);
  });

  test("usage rows round-trip every field, with and without a search fee", async ({ store }) => {
    const full = usageRow("req_full", "key_a", {
      family: "beta",
      model: "beta-opus",
      endpoint: "/v1/messages",
      stream: false,
      status: "cancelled",
      createdAt: 1_700_000_000_000,
      inputTokens: 2 ** 40,
      cachedInputTokens: 12,
      outputTokens: 34,
      webSearchRequests: 3,
      searchFee: 30_000_000_000n,
      reserved: 10n ** 25n,
      charged: 10n ** 24n,
      writtenOff: 5n,
      usageSource: "estimated",
      rates: { input: 15_000_000n, cacheRead: 1_500_000n, output: 75_000_000n, search: 10_000_000_000n },
    });
    const plain = usageRow("req_plain", "key_a", { createdAt: 1_600_000_000_000 });
    await store.commit({ id: batchId(), money: [], usage: [full, plain], open: [full] });
    assert.deepEqual((await store.listUsage("key_a", { limit: 10 })).rows, [full, plain]);
    assert.deepEqual(await store.listOpen(), [full]);
  });

  test("listUsage pages a key's rows newest first (then by request id) with position cursors", async ({ store }) => {
    const rows = [1, 2, 3, 4, 5].map((t) => row(`req_${t}`, "key_a", t * 1_000));
    await store.commit({ id: batchId(), money: [], usage: [...rows, row("req_other", "key_b", 9_000)] });
    const ids = (p: { rows: UsageRow[] }) => p.rows.map((r) => r.requestId);

    const p1 = await store.listUsage("key_a", { limit: 2 });
    assert.deepEqual(ids(p1), ["req_5", "req_4"]);
    assert.equal(p1.cursors.length, 2);
    assert.ok(p1.next);
    const p2 = await store.listUsage("key_a", { limit: 2, after: p1.next });
    assert.deepEqual(ids(p2), ["req_3", "req_2"]);
    const p3 = await store.listUsage("key_a", { limit: 2, after: p2.next! });
    assert.deepEqual(ids(p3), ["req_1"]);
    assert.equal(p3.next, undefined, "the last page has no continuation");

    // A reader that stopped after the first row resumes just past it.
    assert.deepEqual(ids(await store.listUsage("key_a", { limit: 2, after: p1.cursors[0]! })), [
      "req_4",
      "req_3",
    ]);
    // A newer row does not shift a position taken earlier.
    await store.commit({ id: batchId(), money: [], usage: [row("req_6", "key_a", 6_000)] });
    assert.deepEqual(ids(await store.listUsage("key_a", { limit: 2, after: p1.next! })), ["req_3", "req_2"]);

    // Rows of the same millisecond: by request id, and a cursor between them holds.
    await store.commit({
      id: batchId(),
      money: [],
      usage: ["req_c", "req_a", "req_b"].map((id) => row(id, "key_t", 7_000)),
    });
    const t1 = await store.listUsage("key_t", { limit: 1 });
    assert.deepEqual(ids(t1), ["req_a"]);
    assert.deepEqual(ids(await store.listUsage("key_t", { limit: 5, after: t1.next! })), ["req_b", "req_c"]);
    assert.deepEqual(await store.listUsage("key_none", { limit: 5 }), { rows: [], cursors: [] });
  });

  test("the tariff: none until stored, then replaced whole", async ({ store }) => {
    assert.equal(await store.getTariff(), null);
    const rows = [
      { model: "k3", input: "0.60", cacheRead: "0.15", output: "2.50", memberDiscount: true },
      {
        model: "theta3.7-plus",
        aboveInputTokens: 128_000,
        input: "2.4",
        output: "9.6",
        search: { usd: "0.01", per: "request" as const },
      },
    ];
    await store.putTariff(rows);
    assert.deepEqual(await store.getTariff(), rows);
    await store.putTariff(rows.slice(1));
    assert.deepEqual(await store.getTariff(), rows.slice(1));
  });

  test("everything is kept across a reopen: keys, usage rows, checkpoints, tariff, files, set members", async (ctx) => {
    const now = Date.now();
    const f = file("file_1", "key_a", now);
    await ctx.store.createKey(keyRec("key_a", 100n));
    await ctx.store.commit({
      id: batchId(),
      money: [{ keyId: "key_a", spent: 1n, credited: 0n }],
      usage: [row("req_1", "key_a", now, 1n)],
      open: [row("req_2", "key_a", now)],
    });
    await ctx.store.putTariff([{ model: "k3", input: "1", output: "2" }]);
    await ctx.store.putFile(f, bytes("abc"), bytes("[]"), { maxFiles: 1, maxBytes: 100 });
    await putMember(ctx.store, member("key_a", "a", now, 60_000));

    const store = await ctx.reopen();
    assert.equal((await store.getKey("key_a"))!.balance, 99n);
    assert.deepEqual((await store.listUsage("key_a", { limit: 5 })).rows, [row("req_1", "key_a", now, 1n)]);
    assert.deepEqual(await store.listOpen(), [row("req_2", "key_a", now)]);
    assert.deepEqual(await store.getTariff(), [{ model: "k3", input: "1", output: "2" }]);
    assert.deepEqual(await store.listFiles("key_a", now), [f]);
    assert.deepEqual(await store.getFileData(f), bytes("abc"));
    assert.deepEqual((await store.listMembers<TestMember>(TEST_SET, "key_a", now)).map((m) => m.values), [[
      "v_a",
    ]]);
  });
}

function keyRec(id: string, balance: bigint): KeyRecord {
  return keyRecord(id, {
    balance,
    credited: balance,
    caps: { hourlySpend: null, dailySpend: 5n, hourlyReserve: null, dailyReserve: null },
  });
}

function row(requestId: string, keyId: string, createdAt: number, charged = 1n): UsageRow {
  return usageRow(requestId, keyId, { createdAt, charged });
}
