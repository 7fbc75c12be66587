import assert from "node:assert/strict";
import { keyRecord, usageRow } from "./test_fixtures.ts";
import { KvStore } from "./kv_store.ts";
import type { StoredFile } from "./store.ts";
import type { KeyRecord, UsageRow } from "./types.ts";

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

/** A store over an in-memory KV whose atomic commits are counted. */
async function countingStore() {
  const kv = await Deno.openKv(":memory:");
  const atomics = { n: 0 };
  const counted = new Proxy(kv, {
    get(target, prop) {
      if (prop === "atomic") {
        return () => {
          atomics.n++;
          return target.atomic();
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return { store: new KvStore(counted), atomics };
}

function file(id: string, keyId: string, createdAt: number, over: Partial<StoredFile> = {}): StoredFile {
  return {
    id,
    keyId,
    filename: `${id}.txt`,
    purpose: "assistants",
    contentType: "text/plain",
    bytes: 3,
    createdAt,
    expiresAt: createdAt + 3_600_000,
    storedBytes: 10,
    ...over,
  };
}
const bytes = (s: string) => new TextEncoder().encode(s);

Deno.test("KvStore.commit writes money deltas and usage rows", async () => {
  const store = await KvStore.open(":memory:");
  await store.createKey(keyRec("key_a", 100n));
  const updated = { ...keyRec("key_a", 60n), credited: 100n, spent: 40n };
  await store.commit({
    money: [{ keyId: "key_a", spent: 40n, credited: 0n }],
    usage: [row("req_1", "key_a", 1_000, 40n)],
  });
  assert.deepEqual(await store.getKey("key_a"), updated);
  assert.deepEqual(await store.listKeys(), [updated]);
  assert.deepEqual((await store.listUsage("key_a", { limit: 10 })).rows, [
    row("req_1", "key_a", 1_000, 40n),
  ]);
  await assert.rejects(store.createKey(keyRec("key_a", 1n)), /already exists/);
  store.close();
});

Deno.test("KvStore.commit writes checkpoints and deletes settled ones in the same atomic commit", async () => {
  const { store, atomics } = await countingStore();
  await store.createKey(keyRec("key_a", 100n));
  await store.commit({
    money: [],
    usage: [],
    open: [row("req_a", "key_a", 1), row("req_b", "key_a", 2)],
  });
  assert.deepEqual((await store.listOpen()).map((r) => r.requestId), ["req_a", "req_b"]);
  atomics.n = 0;
  await store.commit({
    money: [{ keyId: "key_a", spent: 10n, credited: 0n }],
    usage: [row("req_a", "key_a", 1, 10n)],
    closed: ["req_a"],
    open: [row("req_b", "key_a", 2, 7n), row("req_c", "key_a", 3)],
  });
  assert.equal(atomics.n, 1, "balance, row, deleted and refreshed checkpoints in one atomic operation");
  const open = await store.listOpen();
  assert.deepEqual(open.map((r) => r.requestId), ["req_b", "req_c"]);
  assert.equal(open[0]!.charged, 7n, "a checkpoint is overwritten with the latest row");
  assert.equal((await store.getKey("key_a"))!.balance, 90n);
  store.close();
});

Deno.test("KvStore.listUsage pages a key's rows newest first with cursors", async () => {
  const store = await KvStore.open(":memory:");
  const rows = [1, 2, 3, 4, 5].map((t) => row(`req_${t}`, "key_a", t * 1_000));
  await store.commit({ money: [], usage: [...rows, row("req_other", "key_b", 9_000)] });
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
  await store.commit({ money: [], usage: [row("req_6", "key_a", 6_000)] });
  assert.deepEqual(ids(await store.listUsage("key_a", { limit: 2, after: p1.next! })), ["req_3", "req_2"]);
  store.close();
});

Deno.test("KvStore.putFile takes the quota atomically: two uploads racing for the last slot, one wins", async () => {
  const store = await KvStore.open(":memory:");
  const now = Date.now();
  const quota = { maxFiles: 2, maxBytes: 1_000 };
  assert.equal(await store.putFile(file("file_0", "key_a", now), bytes("abc"), bytes("[]"), quota), "ok");
  const results = await Promise.all([
    store.putFile(file("file_1", "key_a", now), bytes("abc"), bytes("[]"), quota),
    store.putFile(file("file_2", "key_a", now), bytes("abc"), bytes("[]"), quota),
  ]);
  assert.deepEqual([...results].sort(), ["ok", "quota_exceeded"]);
  assert.equal((await store.listFiles("key_a", now)).length, 2);
  // Bytes count too, and another key has its own quota.
  const big = file("file_3", "key_b", now, { storedBytes: 1_001 });
  assert.equal(await store.putFile(big, bytes("abc"), bytes("[]"), quota), "quota_exceeded");
  assert.equal(await store.putFile(file("file_4", "key_b", now), bytes("abc"), bytes("[]"), quota), "ok");
  store.close();
});

Deno.test("KvStore does not return an expired file and gives its quota back", async () => {
  const store = await KvStore.open(":memory:");
  const now = Date.now();
  const quota = { maxFiles: 1, maxBytes: 1_000 };
  const f = file("file_1", "key_a", now, { expiresAt: now + 60_000 });
  assert.equal(
    await store.putFile(f, bytes("hello"), bytes('[{"text":"hello","anchor":"p1"}]'), quota),
    "ok",
  );
  assert.deepEqual(await store.getFile("key_a", "file_1", now), f);
  assert.equal(new TextDecoder().decode(await store.getFileData(f)), "hello");
  assert.deepEqual(await store.getFileSections(f), [{ text: "hello", anchor: "p1" }]);
  assert.equal(await store.getFile("key_b", "file_1", now), null, "another key's file is not found");

  const later = f.expiresAt;
  assert.equal(await store.getFile("key_a", "file_1", later), null);
  assert.deepEqual(await store.listFiles("key_a", later), []);
  // The listing swept it: the slot is free again for a file created after the expiry.
  const next = file("file_2", "key_a", later);
  assert.equal(await store.putFile(next, bytes("x"), bytes("[]"), quota), "ok");
  assert.deepEqual(await store.getFileData(f), new Uint8Array(0), "the expired file's chunks are gone");
  store.close();
});
