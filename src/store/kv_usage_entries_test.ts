/**
 * Usage rows several to a KV entry (kv_usage_entries.ts): the merge lists overlapping entries in order from any
 * cursor, entries stay within Deno KV's value limit, a row stored as an array reads back as it was written, and a
 * store with rows of every format, written by two processes at once, pages them in order.
 */
import assert from "node:assert/strict";
import { deserialize, serialize } from "node:v8";
import type { UsageRow } from "./types.ts";
import {
  ENTRY_BYTES,
  entryRows,
  rowOrder,
  usageEntries,
  type UsageEntry,
  UsageMerge,
} from "./kv_usage_entries.ts";
import { rowBytes, type RowTuple, tupleRow } from "./kv_usage_row.ts";
import { RowPacker, unpackRows } from "./kv_usage_pack.ts";
import { kvKeys } from "./kv_keys.ts";
import { KvStore } from "./kv_store.ts";
import { usageParts } from "./kv_usage_hours.ts";
import { batchId, keyRecord, usageRow } from "./testing/test_fixtures.ts";

/** A small deterministic generator (xorshift), so a failing case can be run again. */
function random(seed: number): (n: number) => number {
  let x = seed || 1;
  return (n) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
}

interface Stored {
  first: { createdAt: number; requestId: string };
  value: UsageEntry;
}

/** Entries as KV lists them: by their key, the first row's place. */
const byKey = (a: Stored, b: Stored) => rowOrder(a.first, b.first);

/** A row as a format-3 build stored it: an array of its values. */
function rowTuple(u: UsageRow): RowTuple {
  const r = u.rates;
  return [
    u.requestId,
    u.keyId,
    u.family,
    u.model,
    u.endpoint,
    u.stream,
    u.status,
    u.createdAt,
    u.inputTokens,
    u.cachedInputTokens,
    u.outputTokens,
    u.webSearchRequests,
    u.searchFee ?? null,
    u.reserved,
    u.charged,
    u.writtenOff,
    u.servedModel ?? null,
    u.usageSource,
    r.input,
    r.cacheRead,
    r.output,
    r.search,
  ];
}

/** Rows packed as one entry (format 4). */
function packed(rows: readonly UsageRow[]): Uint8Array {
  const packer = new RowPacker();
  for (const u of rows) packer.add(u);
  return packer.finish();
}

/** `rows` cut into entries at random, of the four formats (one row; rows as objects; as arrays; packed); sorted
 *  by key. */
function store(rows: UsageRow[], rnd: (n: number) => number): Stored[] {
  const out: Stored[] = [];
  const pool = [...rows];
  while (pool.length > 0) {
    const take = pool.splice(0, 1 + rnd(6)).sort(rowOrder);
    const format = take.length === 1 ? 1 + rnd(4) : 2 + rnd(3);
    const value = format === 1
      ? take[0]!
      : format === 2
      ? take
      : format === 3
      ? take.map(rowTuple)
      : packed(take);
    out.push({ first: take[0]!, value });
  }
  return out.sort(byKey);
}

/** One page as KvUsage.listUsage reads it: the entries from the one the cursor names, in key order. */
function page(entries: Stored[], limit: number, after?: string) {
  const merge = new UsageMerge(limit, after);
  const from = merge.from;
  for (const e of entries) {
    if (from && rowOrder(e.first, from) < 0) continue;
    if (merge.add(e.first, entryRows(e.value))) break;
  }
  return merge.page();
}

const ids = (rows: readonly UsageRow[]) => rows.map((r) => r.requestId);

Deno.test("usage merge: overlapping entries page in order from every cursor, whatever the page size", () => {
  for (let seed = 1; seed <= 200; seed++) {
    const rnd = random(seed);
    // Two or three writers whose entries overlap in time; equal times happen.
    const rows = Array.from(
      { length: 1 + rnd(60) },
      (_, i) =>
        usageRow(`req_${String(rnd(1000)).padStart(3, "0")}_${i}`, "key_m", { createdAt: 1_000 + rnd(40) }),
    );
    const expected = ids(rows.toSorted(rowOrder));
    const entries = store(rows, rnd);
    const limit = 1 + rnd(8);
    // Through `next`, page by page.
    const listed: string[] = [];
    let p = page(entries, limit);
    listed.push(...ids(p.rows));
    for (let guard = 0; p.next !== undefined; guard++) {
      assert.ok(guard <= rows.length, `seed ${seed}: pages do not end`);
      assert.equal(p.rows.length, limit);
      p = page(entries, limit, p.next);
      listed.push(...ids(p.rows));
    }
    assert.deepEqual(listed, expected, `seed ${seed}`);
    // From each row's own cursor: the rest, in order.
    const first = page(entries, rows.length);
    assert.deepEqual(ids(first.rows), expected, `seed ${seed}: one page`);
    assert.equal(first.next, first.cursors.at(-1), `seed ${seed}: a full page goes on`);
    for (const [i, cursor] of first.cursors.entries()) {
      assert.deepEqual(
        ids(page(entries, rows.length, cursor).rows),
        expected.slice(i + 1),
        `seed ${seed} row ${i}`,
      );
    }
  }
});

Deno.test("usage merge: a cursor re-reads no entry it has listed whole but the last one read", () => {
  // One writer: entries follow each other in time, so a row's cursor names its own entry while it has rows
  // left, else the entry after it.
  const rows = Array.from({ length: 9 }, (_, i) => usageRow(`req_${i}`, "key_m", { createdAt: 2_000 - i }));
  const entries = [rows.slice(0, 3), rows.slice(3, 6), rows.slice(6)].map((r) => ({
    first: r[0]!,
    value: r,
  }));
  const p = page(entries, 4);
  assert.deepEqual(ids(p.rows), ["req_0", "req_1", "req_2", "req_3"]);
  assert.deepEqual(p.cursors.map((c) => new UsageMerge(1, c).from?.requestId), [
    "req_0",
    "req_0",
    "req_3",
    "req_3",
  ]);
  assert.equal(p.next, p.cursors[3]);
  assert.deepEqual(ids(page(entries, 10, p.next).rows), ["req_4", "req_5", "req_6", "req_7", "req_8"]);
});

Deno.test("usage merge: a cursor that is not one is refused", () => {
  for (const bad of ["", "12", "1:2:3", "1:2:9:short", "x:2:1:ab", "1:2:-1:ab"]) {
    assert.throws(() => new UsageMerge(5, bad), /invalid usage cursor/, bad);
  }
});

/** A row as large as the gateway writes one: long ids and model, every optional field, large numbers. */
function largeRow(over: Partial<UsageRow> = {}): UsageRow {
  return usageRow(`req_${"x".repeat(60)}`, `key_${"k".repeat(60)}`, {
    model: "m".repeat(120),
    servedModel: "модель-".repeat(20),
    endpoint: "/v1/chat/completions",
    status: "cancelled",
    usageSource: "estimated",
    createdAt: Number.MAX_SAFE_INTEGER,
    inputTokens: Number.MAX_SAFE_INTEGER,
    cachedInputTokens: 2 ** 40 + 0.5,
    outputTokens: -1,
    webSearchRequests: 2 ** 31,
    searchFee: (1n << 127n) - 1n,
    reserved: -(1n << 127n) + 1n,
    charged: 1n << 200n,
    writtenOff: 0n,
    rates: { input: 1n << 64n, cacheRead: 1n << 100n, output: 1n << 127n, search: 1n << 500n },
    ...over,
  });
}

/** A large row that shares little with row `i - 1` (its request id's start, its served model, its rates), so
 *  that packed rows take many bytes. */
function unlikeRow(i: number, over: Partial<UsageRow> = {}): UsageRow {
  const big = largeRow();
  return largeRow({
    requestId: `${String(i).padStart(4, "0").split("").reverse().join("")}_req_${"x".repeat(200)}`,
    servedModel: i % 2 ? big.servedModel : "served-".repeat(20),
    rates: { ...big.rates, search: big.rates.search + BigInt(i) },
    ...over,
  });
}

/** Rows of every shape: small, large with every optional field, large without them, numbers at their longest. */
const shapes = (): UsageRow[] => [
  usageRow("req_1", "key_1"),
  largeRow(),
  largeRow({ servedModel: undefined, searchFee: undefined }),
  usageRow("", "", { model: "", endpoint: "", createdAt: 2 ** 53 - 1, inputTokens: -(2 ** 40) - 0.5 }),
];

Deno.test("rowBytes is at least V8's serialization of the row, not far above", () => {
  for (const [i, u] of shapes().entries()) {
    const [bound, real] = [rowBytes(u), serialize(u).length];
    assert.ok(bound >= real, `row ${i}: ${bound} < ${real}`);
    assert.ok(bound <= 2 * real, `row ${i}: ${bound} far above ${real}`);
  }
});

Deno.test("a row a format-3 build stored as an array reads back as it was written, an absent field absent", () => {
  for (const [i, u] of shapes().entries()) {
    // An optional field set to undefined is absent once stored.
    const present = Object.fromEntries(Object.entries(u).filter(([, v]) => v !== undefined));
    assert.deepEqual(tupleRow(rowTuple(u)), present, `row ${i}`);
  }
  // Through V8's serialization, as Deno KV stores it: the same row, and less than half the bytes.
  const u = usageRow("req_McoVtOpLPXWS0000003", "key_8Kq2mZ0aBcDeFgHiJkLm");
  assert.deepEqual(entryRows(deserialize(serialize([rowTuple(u)]))), [u]);
  assert.ok(2 * serialize(rowTuple(u)).length < serialize(u).length);
});

Deno.test("usageEntries: a key's rows in listing order, cut before ENTRY_BYTES; each entry fits a KV value", () => {
  const rows = Array.from({ length: 400 }, (_, i) => unlikeRow(i, { createdAt: 5_000 + i % 7 }));
  const entries = usageEntries(rows, "batch_1");
  assert.ok(entries.length > 1);
  assert.deepEqual(entries.flatMap((e) => ids(e.rows)), ids(rows.toSorted(rowOrder)));
  for (const e of entries) {
    assert.ok(e.bytes <= ENTRY_BYTES);
    assert.equal(e.value.length, e.bytes);
    assert.deepEqual(unpackRows(e.value), e.rows);
    assert.deepEqual(
      e.key,
      kvKeys.usageEntry(e.rows[0]!.keyId, e.rows[0]!.createdAt, e.rows[0]!.requestId, "batch_1"),
    );
  }
});

async function tempFile(): Promise<{ path: string; [Symbol.asyncDispose](): Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "kv_usage_entries_" });
  return { path: `${dir}/gateway.kv`, [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }) };
}

async function listAll(s: KvStore, keyId: string, limit: number): Promise<string[]> {
  const out: string[] = [];
  let after: string | undefined;
  do {
    const p = await s.listUsage(keyId, after === undefined ? { limit } : { limit, after });
    out.push(...ids(p.rows));
    after = p.next;
  } while (after !== undefined);
  return out;
}

Deno.test("KV store: two processes' overlapping commits and older formats' rows page in order, whole", async () => {
  await using file = await tempFile();
  const a = await KvStore.open(file.path);
  const b = await KvStore.open(file.path);
  try {
    await a.createKey(keyRecord("key_s", { credited: 1_000_000n, balance: 1_000_000n }));
    const rnd = random(7);
    const rows: UsageRow[] = [];
    for (let round = 0; round < 6; round++) {
      for (const s of [a, b]) {
        const batch = Array.from({ length: 1 + rnd(30) }, () => {
          const u = usageRow(`req_${rows.length.toString().padStart(4, "0")}`, "key_s", {
            createdAt: 10_000 + round * 20 + rnd(40),
            model: rnd(3) === 0 ? "k2" : "k3",
          });
          rows.push(u);
          return u;
        });
        await s.commit({ id: batchId(), money: [], usage: batch });
      }
    }
    // This build's rows are packed (format 4). Rows a format-1 build wrote, one to an entry, among them.
    const kv = await Deno.openKv(file.path);
    try {
      for (let i = 0; i < 20; i++) {
        const u = usageRow(`req_old_${i}`, "key_s", { createdAt: 10_000 + rnd(160) });
        rows.push(u);
        await kv.set(kvKeys.usage(u.keyId, u.createdAt, u.requestId), u);
      }
      // And rows format-2 and format-3 builds wrote, several to an entry as objects or as arrays of their values
      // (one with every optional field).
      const older = [["two", (e: UsageRow[]) => e], ["three", (e: UsageRow[]) => e.map(rowTuple)]] as const;
      for (const [format, value] of older) {
        for (let i = 0; i < 4; i++) {
          const entry = Array.from(
            { length: 1 + rnd(5) },
            (_, j) =>
              usageRow(`req_${format}_${i}_${j}`, "key_s", {
                createdAt: 10_000 + rnd(160),
                ...(j === 0 ? { servedModel: "k3-fallback", searchFee: 7n } : {}),
              }),
          ).sort(rowOrder);
          rows.push(...entry);
          const first = entry[0]!;
          const key = kvKeys.usageEntry(first.keyId, first.createdAt, first.requestId, `cb_${format}_${i}`);
          await kv.set(key, value(entry));
        }
      }
    } finally {
      kv.close();
    }
    const expected = ids(rows.toSorted(rowOrder));
    for (const limit of [1, 7, 50, 1_000]) {
      assert.deepEqual(await listAll(a, "key_s", limit), expected, `${limit}`);
    }
    assert.deepEqual((await b.listUsage("key_s", { limit: 1_000 })).rows, rows.toSorted(rowOrder));
  } finally {
    await a.close();
    await b.close();
  }
});

Deno.test("KV store: a commit of 3,000 large rows of one key goes in, in entries within KV's limits", async () => {
  await using file = await tempFile();
  const s = await KvStore.open(file.path);
  try {
    const rows = Array.from({ length: 3_000 }, (_, i) =>
      unlikeRow(i, {
        keyId: "key_big",
        model: "k3",
        createdAt: 1_700_000_000_000 + i,
        inputTokens: 1,
        outputTokens: 2,
        cachedInputTokens: 0,
        charged: 3n,
      }));
    assert.ok(usageParts(rows, "batch_1").length > 1, "more than one atomic's values");
    await s.commit({ id: batchId(), money: [], usage: rows });
    assert.deepEqual(await listAll(s, "key_big", 500), ids(rows.toSorted(rowOrder)));
    const hour = 1_700_000_000_000 - 1_700_000_000_000 % 3_600_000;
    const sums = await s.usageHours("key_big", hour, hour + 2 * 3_600_000);
    assert.equal(sums.reduce((n, h) => n + h.requests, 0), 3_000);
    assert.equal(sums.reduce((n, h) => n + h.charged, 0n), 9_000n);
  } finally {
    await s.close();
  }
});

Deno.test("KV store: a row two batches write keeps every other row of both, listed as its hour counts it", async () => {
  await using file = await tempFile();
  const s = await KvStore.open(file.path);
  try {
    const at = Date.UTC(2026, 2, 1, 10, 5);
    const shared = usageRow("req_shared", "key_d", { createdAt: at + 10, charged: 5n });
    const first = [
      shared,
      usageRow("req_a1", "key_d", { createdAt: at + 2 }),
      usageRow("req_a2", "key_d", { createdAt: at + 1 }),
    ];
    const second = [shared, usageRow("req_b1", "key_d", { createdAt: at + 3 })];
    await s.commit({ id: batchId(), money: [], usage: first });
    await s.commit({ id: batchId(), money: [], usage: second });
    // The shared row is the first of an entry in both batches: one entry must not replace the other.
    assert.deepEqual(await listAll(s, "key_d", 10), [
      "req_shared",
      "req_shared",
      "req_b1",
      "req_a1",
      "req_a2",
    ]);
    const hour = at - at % 3_600_000;
    const [sums] = await s.usageHours("key_d", hour, hour + 3_600_000);
    assert.equal(sums?.requests, 5);
    assert.equal(sums?.charged, 5n + 5n + 1n + 1n + 1n);
  } finally {
    await s.close();
  }
});
