/**
 * What only the KV store promises about the hourly sums (kv_usage_hours.ts): a KV file written before them
 * is counted once at open, also when processes open it at once, and never over a commit made after.
 */
import assert from "node:assert/strict";
import { kvKeys } from "./kv_keys.ts";
import { KvStore } from "./kv_store.ts";
import { backfillUsageHours } from "./kv_usage_hours.ts";
import { batchId, usageRow } from "./testing/test_fixtures.ts";
import type { UsageRow } from "./types.ts";
import { allRows, expectedHours } from "./testing/usage_hours_contract.ts";

const HOUR = 3_600_000;
const H = Date.UTC(2026, 2, 1, 10);
const ALL: [number, number] = [H - 10 * HOUR, H + 10 * HOUR];

/** Rows of two keys over three hours and two models, as an older version wrote them: rows only. */
const OLD = Array.from({ length: 30 }, (_, i) =>
  usageRow(`req_old_${i}`, i % 4 === 0 ? "key_b" : "key_a", {
    createdAt: H + (i % 3) * HOUR + i,
    model: i % 2 === 0 ? "k3" : "k4",
    inputTokens: i,
    cachedInputTokens: i % 5,
    outputTokens: 2 * i,
    charged: (1n << 33n) + BigInt(i),
  }));

async function oldFile(): Promise<{ path: string; [Symbol.asyncDispose](): Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "kv_usage_hours_" });
  const path = `${dir}/gateway.kv`;
  const kv = await Deno.openKv(path);
  for (const u of OLD) await kv.set(kvKeys.usage(u.keyId, u.createdAt, u.requestId), u);
  kv.close();
  return { path, [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }) };
}

const only = (rows: UsageRow[], keyId: string) => rows.filter((u) => u.keyId === keyId);

Deno.test("KV usage hours: a file written before them is counted at open, once", async () => {
  await using file = await oldFile();
  const store = await KvStore.open(file.path);
  const fresh = [usageRow("req_new", "key_a", { createdAt: H + 5, charged: 3n })];
  try {
    for (const k of ["key_a", "key_b"]) {
      assert.deepEqual(await store.usageHours(k, ...ALL), expectedHours(only(OLD, k), ...ALL));
    }
    await store.commit({ id: batchId(), money: [], usage: fresh });
  } finally {
    await store.close();
  }
  const again = await KvStore.open(file.path); // the marker is there: nothing is counted again
  try {
    assert.deepEqual(
      await again.usageHours("key_a", ...ALL),
      expectedHours(only([...OLD, ...fresh], "key_a"), ...ALL),
    );
  } finally {
    await again.close();
  }
});

Deno.test("KV usage hours: two processes opening an older file at once count it once", async () => {
  await using file = await oldFile();
  const [a, b] = await Promise.all([KvStore.open(file.path), KvStore.open(file.path)]);
  try {
    await a.commit({ id: batchId(), money: [], usage: [usageRow("req_a", "key_a", { createdAt: H })] });
    const want = expectedHours([...only(OLD, "key_a"), usageRow("req_a", "key_a", { createdAt: H })], ...ALL);
    assert.deepEqual(await b.usageHours("key_a", ...ALL), want);
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});

Deno.test("KV usage hours: a backfill that read the rows before another process finished writes nothing after it", async () => {
  await using file = await oldFile();
  const late = await Deno.openKv(file.path);
  const fresh = usageRow("req_fresh", "key_a", { createdAt: H + 7, charged: 11n, model: "k3" });
  // Once `late` has read every row, another process opens the file (counting the rows) and commits a row.
  const spied = new Proxy(late, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (prop !== "list") return typeof v === "function" ? v.bind(target) : v;
      return (...args: Parameters<Deno.Kv["list"]>) => {
        const inner = target.list(...args);
        return (async function* () {
          yield* inner;
          const first = await KvStore.open(file.path);
          await first.commit({ id: batchId(), money: [], usage: [fresh] });
          await first.close();
        })();
      };
    },
  });
  await backfillUsageHours(spied as Deno.Kv);
  late.close();
  const store = await KvStore.open(file.path);
  try {
    const want = expectedHours([...only(OLD, "key_a"), fresh], ...ALL);
    assert.deepEqual(
      await store.usageHours("key_a", ...ALL),
      want,
      "the fresh row's sums are not overwritten",
    );
  } finally {
    await store.close();
  }
});

Deno.test("KV usage hours: a backfill of more counters than one atomic holds writes them all", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kv_usage_hours_" });
  const path = `${dir}/gateway.kv`;
  const kv = await Deno.openKv(path);
  // 400 hours × 2 models: 800 hours of 7 counters each, several atomics.
  const rows = Array.from(
    { length: 800 },
    (_, i) =>
      usageRow(`req_${i}`, "key_a", { createdAt: H + Math.floor(i / 2) * HOUR, model: i % 2 ? "k4" : "k3" }),
  );
  for (let i = 0; i < rows.length; i += 100) {
    const op = kv.atomic();
    for (const u of rows.slice(i, i + 100)) op.set(kvKeys.usage(u.keyId, u.createdAt, u.requestId), u);
    await op.commit();
  }
  kv.close();
  const store = await KvStore.open(path);
  try {
    const hours = await store.usageHours("key_a", H, H + 400 * HOUR);
    assert.equal(hours.length, 800);
    assert.deepEqual(hours, expectedHours(rows, H, H + 400 * HOUR));
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("KV usage rows: a row given twice is kept once, the last one, among rows a ms apart or many of one ms", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kv_usage_hours_" });
  const s = await KvStore.open(`${dir}/gateway.kv`);
  try {
    // 200 rows of one ms (past the rows `distinct` compares one by one), then rows two or three to a ms.
    for (
      const [keyId, at] of [["key_one_ms", () => H], [
        "key_spread",
        (i: number) => H + Math.floor(i / 3),
      ]] as const
    ) {
      const rows = Array.from({ length: 200 }, (_, i) => usageRow(`req_${i}`, keyId, { createdAt: at(i) }));
      const again = { ...rows[50]!, charged: 99n };
      await s.commit({ id: batchId(), money: [], usage: [...rows, again] });
      const kept = rows.map((u) => u === rows[50] ? again : u);
      const listed = await allRows(s, keyId);
      assert.equal(listed.length, 200, keyId);
      assert.deepEqual(listed.find((u) => u.requestId === "req_50")?.charged, 99n, keyId);
      assert.deepEqual(await s.usageHours(keyId, ...ALL), expectedHours(kept, ...ALL), keyId);
    }
  } finally {
    await s.close();
    await Deno.remove(dir, { recursive: true });
  }
});
