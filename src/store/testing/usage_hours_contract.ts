/**
 * The contract of Store.usageHours, on every backend: the hourly sums a commit keeps beside the
 * rows it writes. Expected sums are computed from the rows the test wrote (the rows read back agree), never
 * from the store's own sums.
 */
import assert from "node:assert/strict";
import { contractTest, type StoreBackend } from "./store_contract.ts";
import type { Store } from "../store.ts";
import { batchId, keyRecord, usageRow } from "./test_fixtures.ts";
import type { UsageHour, UsageRow } from "../types.ts";

const HOUR = 3_600_000;
/** 2026-03-01 10:00 UTC. */
const H = Date.UTC(2026, 2, 1, 10);

/** The hours `rows` add up to in [from, to), as the contract orders them (by hour, family, model; bytes). */
export function expectedHours(rows: readonly UsageRow[], from: number, to: number): UsageHour[] {
  const byGroup = new Map<string, UsageHour>();
  for (const u of rows) {
    const hour = u.createdAt - (u.createdAt % HOUR);
    if (hour < from || hour >= to) continue;
    const group = JSON.stringify([hour, u.family, u.model]);
    const h = byGroup.get(group) ?? {
      hour,
      family: u.family,
      model: u.model,
      requests: 0,
      charged: 0n,
      inputTokens: 0,
      cachedInputTokens: 0,
      outputTokens: 0,
    };
    h.requests++;
    h.charged += u.charged;
    h.inputTokens += u.inputTokens;
    h.cachedInputTokens += u.cachedInputTokens;
    h.outputTokens += u.outputTokens;
    byGroup.set(group, h);
  }
  const bytes = (s: string) => [...new TextEncoder().encode(s)];
  const cmp = (a: string, b: string) => {
    const [x, y] = [bytes(a), bytes(b)];
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
    return x.length - y.length;
  };
  return [...byGroup.values()].sort((a, b) =>
    a.hour - b.hour || cmp(a.family, b.family) || cmp(a.model, b.model)
  );
}

/** Every row of a key, read back page by page. */
export async function allRows(store: Store, keyId: string): Promise<UsageRow[]> {
  const out: UsageRow[] = [];
  let after: string | undefined;
  do {
    const page = await store.listUsage(keyId, after === undefined ? { limit: 500 } : { limit: 500, after });
    out.push(...page.rows);
    after = page.next;
  } while (after !== undefined);
  return out;
}

let seq = 0;
/** A row of `keyId` at `createdAt` with distinct token counts and charge, `over` on top. */
function row(keyId: string, createdAt: number, over: Partial<UsageRow> = {}): UsageRow {
  const n = ++seq;
  return usageRow(`req_${n}`, keyId, {
    createdAt,
    inputTokens: 100 + n,
    cachedInputTokens: n % 3 === 0 ? 0 : 10 + n,
    outputTokens: 7 * n,
    charged: 1_000_003n * BigInt(n),
    ...over,
  });
}

export function usageHoursContract(backend: StoreBackend): void {
  const test = contractTest(backend);

  test("usageHours: sums of several commits and batches, per hour, family and model", async ({ store }) => {
    const batches = [
      [row("key_a", H + 1), row("key_a", H + 2, { model: "k4" }), row("key_a", H + 3)],
      [row("key_a", H + 10, { family: "beta", model: "b1", status: "error", charged: 0n })],
      [row("key_a", H + HOUR + 5), row("key_a", H + 20), row("key_a", H + 21, { model: "k4" })],
    ];
    for (const usage of batches) await store.commit({ id: batchId(), money: [], usage });
    const written = batches.flat();
    assert.equal((await allRows(store, "key_a")).length, written.length);
    const hours = await store.usageHours("key_a", H, H + 2 * HOUR);
    assert.deepEqual(hours, expectedHours(written, H, H + 2 * HOUR));
    assert.deepEqual(hours.map((h) => [h.hour, h.family, h.model, h.requests]), [
      [H, "alpha", "k3", 3],
      [H, "alpha", "k4", 2],
      [H, "beta", "b1", 1],
      [H + HOUR, "alpha", "k3", 1],
    ]);
    assert.deepEqual(hours[2], {
      hour: H,
      family: "beta",
      model: "b1",
      requests: 1,
      charged: 0n,
      inputTokens: batches[1]![0]!.inputTokens,
      cachedInputTokens: batches[1]![0]!.cachedInputTokens,
      outputTokens: batches[1]![0]!.outputTokens,
    });
  });

  test("usageHours: a row at hh:59:59.999 counts in its hour, one at the next hour's start in that one", async ({ store }) => {
    const last = row("key_a", H + HOUR - 1);
    const next = row("key_a", H + HOUR);
    await store.commit({ id: batchId(), money: [], usage: [last, next] });
    assert.deepEqual(await store.usageHours("key_a", H, H + HOUR), expectedHours([last], H, H + HOUR));
    assert.deepEqual(await store.usageHours("key_a", H + HOUR, H + 2 * HOUR), expectedHours([next], 0, 1e15));
    assert.deepEqual((await store.usageHours("key_a", H, H + 2 * HOUR)).map((h) => [h.hour, h.requests]), [
      [H, 1],
      [H + HOUR, 1],
    ]);
  });

  test("usageHours: hours whose start is in [from, to) — from inclusive, to exclusive", async ({ store }) => {
    const rows = [0, 1, 2, 3].map((i) => row("key_a", H + i * HOUR + 30 * 60_000));
    await store.commit({ id: batchId(), money: [], usage: rows });
    const hoursOf = async (from: number, to: number) =>
      (await store.usageHours("key_a", from, to)).map((h) => (h.hour - H) / HOUR);
    assert.deepEqual(await hoursOf(H, H + 4 * HOUR), [0, 1, 2, 3]);
    assert.deepEqual(await hoursOf(H + HOUR, H + 3 * HOUR), [1, 2]);
    assert.deepEqual(await hoursOf(H + HOUR, H + HOUR), []);
    assert.deepEqual(await hoursOf(H + 3 * HOUR, H), []);
    // Bounds inside an hour: an hour counts when its start is in range.
    assert.deepEqual(await hoursOf(H + 1, H + 2 * HOUR + 1), [1, 2]);
    assert.deepEqual(await hoursOf(H - 100 * HOUR, H + 100 * HOUR), [0, 1, 2, 3]);
    await assert.rejects(store.usageHours("key_a", H + 0.5, H + HOUR), RangeError);
    await assert.rejects(store.usageHours("key_a", H, Number.POSITIVE_INFINITY), RangeError);
  });

  test("usageHours: another key's rows never appear, whatever its id shares with the key's", async ({ store }) => {
    const mine = [row("key_a", H + 1), row("key_a", H + HOUR + 1, { model: "k4" })];
    const others = ["key_", "key_a_", "key_aa", "key_b", "key_"].map((k, i) => row(k, H + i));
    await store.commit({ id: batchId(), money: [], usage: [...others, ...mine] });
    assert.deepEqual(await store.usageHours("key_a", H, H + 2 * HOUR), expectedHours(mine, H, H + 2 * HOUR));
    assert.deepEqual(await store.usageHours("key_none", H, H + 2 * HOUR), []);
    assert.deepEqual((await store.usageHours("key_", H, H + HOUR))[0]!.requests, 2);
  });

  test("usageHours: charges beyond one 64-bit counter and limb carries stay exact", async ({ store }) => {
    const big = [
      row("key_a", H + 1, { charged: (1n << 70n) + 12_345n }),
      row("key_a", H + 2, { charged: (1n << 32n) - 1n }),
      row("key_a", H + 3, { charged: (1n << 32n) - 1n }),
      row("key_a", H + 4, { charged: (1n << 64n) - 1n }),
    ];
    for (const r of big) await store.commit({ id: batchId(), money: [], usage: [r] });
    const [hour] = await store.usageHours("key_a", H, H + HOUR);
    assert.equal(hour!.charged, (1n << 70n) + 12_345n + 2n * ((1n << 32n) - 1n) + (1n << 64n) - 1n);
    assert.equal(hour!.requests, 4);
  });

  test("usageHours: a row given twice in one batch is written and counted once", async ({ store }) => {
    const r = row("key_a", H + 1);
    await store.commit({ id: batchId(), money: [], usage: [r, { ...r }] });
    assert.equal((await allRows(store, "key_a")).length, 1);
    assert.deepEqual(await store.usageHours("key_a", H, H + HOUR), expectedHours([r], H, H + HOUR));
  });

  test("usageHours: rows that share only their request id are each written and counted", async ({ store }) => {
    const a = row("key_a", H + 1, { requestId: "req_same" });
    const later = { ...a, createdAt: H + 2 };
    const b = row("key_b", H + 1, { requestId: "req_same" });
    // A row given again between them (the same key, time and id) still counts once.
    await store.commit({ id: batchId(), money: [], usage: [a, later, { ...a }, b] });
    assert.equal((await allRows(store, "key_a")).length, 2);
    assert.equal((await allRows(store, "key_b")).length, 1);
    assert.deepEqual(await store.usageHours("key_a", H, H + HOUR), expectedHours([a, later], H, H + HOUR));
    assert.deepEqual(await store.usageHours("key_b", H, H + HOUR), expectedHours([b], H, H + HOUR));
  });

  test("usageHours: a batch larger than one write (3,000 rows, 60 hours × 3 models) is counted whole", async ({ store }) => {
    // Long ids make the keys long: a KV batch then splits on the size of its keys before the mutation count.
    const keyId = `key_${"k".repeat(60)}`;
    const rows = Array.from({ length: 3_000 }, (_, i) =>
      row(keyId, H + (i % 60) * HOUR + i, {
        requestId: `req_${"r".repeat(60)}_${i}`,
        model: `model-${"m".repeat(40)}-${Math.floor(i / 60) % 3}`,
      }));
    await store.createKey(keyRecord(keyId, { credited: 10n ** 15n }));
    await store.commit({ id: batchId(), money: [{ keyId, spent: 5n, credited: 0n }], usage: rows });
    assert.equal((await allRows(store, keyId)).length, rows.length);
    const hours = await store.usageHours(keyId, H, H + 60 * HOUR);
    assert.equal(hours.length, 180);
    assert.deepEqual(hours, expectedHours(rows, H, H + 60 * HOUR));
    assert.equal((await store.getKey(keyId))!.spent, 5n);
  });

  test("usageHours: two store handles committing at once lose nothing", async (ctx) => {
    const other = await ctx.open();
    const batch = (i: number) => [row("key_a", H + i), row("key_a", H + HOUR + i, { model: "k4" })];
    const batches = Array.from({ length: 40 }, (_, i) => batch(i));
    await Promise.all(
      batches.map((usage, i) =>
        (i % 2 === 0 ? ctx.store : other).commit({ id: batchId(), money: [], usage })
      ),
    );
    const want = expectedHours(batches.flat(), H, H + 2 * HOUR);
    assert.deepEqual(await ctx.store.usageHours("key_a", H, H + 2 * HOUR), want);
    assert.deepEqual(await other.usageHours("key_a", H, H + 2 * HOUR), want);
    assert.deepEqual(want.map((h) => h.requests), [40, 40]);
  });

  test("usageHours: a drain checkpoint is not counted until it is settled as a row", async ({ store }) => {
    const open = row("key_a", H + 1);
    await store.commit({ id: batchId(), money: [], usage: [], open: [open] });
    assert.deepEqual(await store.usageHours("key_a", H, H + HOUR), []);
    const settled = { ...open, charged: 5n };
    await store.commit({ id: batchId(), money: [], usage: [settled], closed: [open.requestId] });
    assert.deepEqual(await store.usageHours("key_a", H, H + HOUR), expectedHours([settled], H, H + HOUR));
  });

  test("usageHours: sums survive a reopen", async (ctx) => {
    const rows = [row("key_a", H + 1), row("key_a", H + 2, { family: "gamma", model: "g" })];
    await ctx.store.commit({ id: batchId(), money: [], usage: rows });
    const again = await ctx.reopen();
    assert.deepEqual(await again.usageHours("key_a", H, H + HOUR), expectedHours(rows, H, H + HOUR));
  });
}
