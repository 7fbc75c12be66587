/**
 * backupStream (stream.ts): a snapshot that stalls — a client that stops reading, or a read of the store that
 * does not return — is cut after `holdMs`: the body errors without its trailer (what was received is refused as
 * truncated), onEnd gets the SnapshotTimeoutError, and on KV the store's writes, held by the snapshot, go on.
 * Every wait is bounded; nothing asserts how long anything took.
 */
import assert from "node:assert/strict";
import { backupStream, SnapshotTimeoutError } from "./stream.ts";
import { readBackup, verifyBackup } from "./reader.ts";
import { concatBytes } from "../util/bytes.ts";
import { KvStore } from "../store/kv_store.ts";
import type { BackupStore, SnapshotReads } from "../store/store.ts";
import { batchId, keyRecord, usageRow } from "../store/testing/test_fixtures.ts";

const HOLD_MS = 50;
const HASH = "ab".repeat(32);

/** `p`, or a failure naming `what` if it has not settled within 5 s. */
async function bounded<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within 5 s`)), 5_000);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A backup stream of `store` with its onEnd's argument as a promise. */
function stream(store: BackupStore) {
  const ended = Promise.withResolvers<unknown>();
  const body = backupStream(store, "kv", 1_000, HOLD_MS, (err) => ended.resolve(err));
  return { body, ended: bounded(ended.promise, "onEnd") };
}

/** Reads `body` until it ends or errors: the chunks received and the error, if any. */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, received: Uint8Array[]) {
  try {
    for (let r = await reader.read(); !r.done; r = await reader.read()) received.push(r.value);
    return null;
  } catch (err) {
    return err;
  }
}

/** What readBackup says of `bytes`. */
async function readError(bytes: Uint8Array): Promise<string> {
  try {
    for await (const _ of readBackup(ReadableStream.from([bytes]))) { /* read through */ }
    return "accepted";
  } catch (err) {
    return (err as Error).message;
  }
}

const TRUNCATED = "no trailer: the file is truncated (a backup cut short or copied in part)";

/** A KV store with key_a and `rows` usage rows: a snapshot of more records than the stream keeps ahead. */
async function kvWithRows(rows: number): Promise<KvStore> {
  const store = await KvStore.open(":memory:");
  await store.createKey(keyRecord("key_a", { hash: HASH, credited: 10n ** 15n, balance: 10n ** 15n }));
  await store.commit({
    id: batchId(),
    money: [{ keyId: "key_a", spent: BigInt(rows), credited: 0n }],
    usage: Array.from({ length: rows }, (_, i) => usageRow(`req_${i}`, "key_a", { createdAt: 1_000 + i })),
  });
  return store;
}

Deno.test("backupStream: read whole, the body is a file the reader accepts and onEnd gets null", async () => {
  const store = await kvWithRows(300);
  try {
    const { body, ended } = stream(store);
    const received: Uint8Array[] = [];
    assert.equal(await bounded(drain(body.getReader(), received), "the body"), null);
    assert.equal(await ended, null);
    const summary = await verifyBackup(ReadableStream.from(received));
    assert.deepEqual(summary.counts, { payment_method: 2, key: 1, usage: 300, usage_hour: 1 });
  } finally {
    await store.close();
  }
});

Deno.test("backupStream: a client that stops reading is cut after holdMs; the body errors without its trailer and KV's writes go on", async () => {
  const store = await kvWithRows(300);
  try {
    const { body, ended } = stream(store);
    const reader = body.getReader();
    const first = await bounded(reader.read(), "the first chunk");
    assert.equal(first.done, false);
    const received = [first.value!];
    // Nothing more is read until the snapshot is cut.
    const err = await ended;
    assert.ok(err instanceof SnapshotTimeoutError, String(err));
    assert.equal(err.message, `backup snapshot cut after ${HOLD_MS} ms (BACKUP_HOLD_MS)`);
    assert.equal(await bounded(drain(reader, received), "the rest of the body"), err, "the body errors");
    assert.equal(await readError(concatBytes(received)), TRUNCATED);
    // The gate is open again: a write the snapshot would hold completes.
    await bounded(store.createKey(keyRecord("key_b", { hash: "cd".repeat(32) })), "a write after the cut");
    assert.equal((await store.getKey("key_b"))?.id, "key_b");
  } finally {
    await store.close();
  }
});

Deno.test("backupStream: a read of the store that does not return is cut after holdMs; KV's writes go on once that read returns", async () => {
  const store = await kvWithRows(3);
  const stuck = Promise.withResolvers<void>();
  // The store, its view's listKeys held until the test lets it go.
  const stalledView = (view: SnapshotReads): SnapshotReads =>
    Object.assign(Object.create(view) as SnapshotReads, {
      listKeys: () => stuck.promise.then(() => view.listKeys()),
    });
  const stalled: BackupStore = Object.assign(Object.create(store) as BackupStore, {
    readSnapshot: <T>(read: (view: SnapshotReads) => Promise<T>) =>
      store.readSnapshot((view) => read(stalledView(view))),
  });
  try {
    const { body, ended } = stream(stalled);
    const received: Uint8Array[] = [];
    const bodyErr = bounded(drain(body.getReader(), received), "the body");
    const err = await ended;
    assert.ok(err instanceof SnapshotTimeoutError, String(err));
    assert.equal(await bodyErr, err, "the body errors");
    const got = concatBytes(received);
    assert.equal(await readError(got), TRUNCATED);
    assert.match(new TextDecoder().decode(got), /^\{"t":"header",/, "the header was sent before the stall");
    // The snapshot still holds this process's writes while its read is in flight; once it returns, they go on.
    const write = store.createKey(keyRecord("key_b", { hash: "cd".repeat(32) }));
    stuck.resolve();
    await bounded(write, "a write after the stuck read returned");
    assert.equal((await store.getKey("key_b"))?.id, "key_b");
  } finally {
    stuck.resolve();
    await store.close();
  }
});
