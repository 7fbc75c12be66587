/**
 * The Deno KV store's format record (kv_format.ts): a fresh store gets the newest version, an older one is
 * migrated on open, a newer one is refused with nothing written.
 */
import assert from "node:assert/strict";
import { StoreFormatError } from "./format.ts";
import { KV_MIGRATIONS, type KvMigration, type StoreFormat } from "./kv_format.ts";
import { kvKeys } from "./kv_keys.ts";
import { KvStore } from "./kv_store.ts";
import { assertSample, writeSample } from "./testing/format_fixtures.ts";
import { usageRow } from "./testing/test_fixtures.ts";

const CURRENT = KV_MIGRATIONS.at(-1)!.version;

async function tempFile(): Promise<{ path: string; [Symbol.asyncDispose](): Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "kv_format_" });
  return { path: `${dir}/gateway.kv`, [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }) };
}

/** What the file holds, read as raw KV. */
async function raw<T>(path: string, read: (kv: Deno.Kv) => Promise<T>): Promise<T> {
  const kv = await Deno.openKv(path);
  try {
    return await read(kv);
  } finally {
    kv.close();
  }
}

const formatOf = (path: string) =>
  raw(path, async (kv) => (await kv.get<StoreFormat>(kvKeys.storeFormat())).value);

const entries = (path: string) => raw(path, (kv) => Array.fromAsync(kv.list({ prefix: [] })));

/** This build's migrations and one more, as a newer build has; `runs` counts its step. */
function newerBuild(): { migrations: KvMigration[]; runs: () => number } {
  let runs = 0;
  const step: KvMigration = {
    version: CURRENT + 1,
    name: "test step",
    run: async (kv) => {
      runs++;
      await kv.set(["test_step"], runs);
    },
  };
  return { migrations: [...KV_MIGRATIONS, step], runs: () => runs };
}

Deno.test("KV store format: a fresh store records the newest version and nothing else", async () => {
  await using file = await tempFile();
  await (await KvStore.open(file.path)).close();
  assert.deepEqual(
    (await entries(file.path)).map((e) => [e.key, e.value]),
    [[["store_format"], { version: CURRENT }]],
  );
});

Deno.test("KV store format: a newer build migrates a store of this format once, the data intact", async () => {
  await using file = await tempFile();
  const store = await KvStore.open(file.path);
  try {
    await writeSample(store);
  } finally {
    await store.close();
  }
  const newer = newerBuild();
  for (let open = 0; open < 2; open++) {
    const migrated = await KvStore.open(file.path, undefined, undefined, newer.migrations);
    try {
      await assertSample(migrated);
    } finally {
      await migrated.close();
    }
  }
  assert.equal(newer.runs(), 1, "the step runs on the first open only");
  assert.deepEqual(await formatOf(file.path), { version: CURRENT + 1 });
  assert.equal(await raw(file.path, async (kv) => (await kv.get(["test_step"])).value), 1);
});

Deno.test("KV store format: a store of a newer format is refused, with nothing written", async () => {
  await using file = await tempFile();
  const newer = newerBuild();
  const store = await KvStore.open(file.path, undefined, undefined, newer.migrations);
  try {
    await writeSample(store);
  } finally {
    await store.close();
  }
  const before = await entries(file.path);
  const err = await KvStore.open(file.path).then(
    (s) => s.close().then(() => assert.fail("opened a newer store")),
    (e: unknown) => e,
  );
  assert.ok(err instanceof StoreFormatError, String(err));
  assert.equal(
    err.message,
    `the Deno KV store ${file.path} is format ${CURRENT + 1}, written by a newer gateway; this build reads ` +
      `formats up to ${CURRENT}. Run the newer gateway, or restore a backup into an empty store ` +
      "(docs/upgrades.md).",
  );
  assert.deepEqual(await entries(file.path), before, "every entry and its versionstamp unchanged");
});

Deno.test("KV store format: a version the build's list skips is refused too", async () => {
  await using file = await tempFile();
  await raw(file.path, (kv) => kv.set(kvKeys.storeFormat(), { version: 7 }));
  const skipping = [...KV_MIGRATIONS, { version: 8, name: "test", run: () => Promise.resolve() }];
  await assert.rejects(
    KvStore.open(file.path, undefined, undefined, skipping),
    (e: unknown) =>
      e instanceof StoreFormatError && /records format 7, which this build does not know/.test(e.message),
  );
});

Deno.test("KV store format: a store from before the record is migrated on open and records the version", async () => {
  await using file = await tempFile();
  // As a gateway from before the hourly sums left it: a usage row, no sums, no ready marker, no format record.
  const row = usageRow("req_old", "key_old", { createdAt: Date.UTC(2026, 2, 1, 10, 5), charged: 9n });
  await raw(file.path, (kv) => kv.set(kvKeys.usage(row.keyId, row.createdAt, row.requestId), row));
  const store = await KvStore.open(file.path);
  try {
    const hour = Date.UTC(2026, 2, 1, 10);
    assert.deepEqual(
      (await store.usageHours("key_old", hour, hour + 3_600_000)).map((h) => [h.requests, h.charged]),
      [[1, 9n]],
    );
  } finally {
    await store.close();
  }
  assert.deepEqual(await formatOf(file.path), { version: CURRENT });
  assert.equal(await raw(file.path, async (kv) => (await kv.get(kvKeys.usageHoursReady())).value), true);
});

Deno.test("KV store format: processes opening a store from before the record at once all migrate it", async () => {
  await using file = await tempFile();
  const row = usageRow("req_old", "key_old", { createdAt: Date.UTC(2026, 2, 1, 10, 5), charged: 9n });
  await raw(file.path, (kv) => kv.set(kvKeys.usage(row.keyId, row.createdAt, row.requestId), row));
  const newer = newerBuild();
  const stores = await Promise.all(
    [0, 1, 2].map(() => KvStore.open(file.path, undefined, undefined, newer.migrations)),
  );
  await Promise.all(stores.map((s) => s.close()));
  assert.deepEqual(await formatOf(file.path), { version: CURRENT + 1 });
  assert.ok(newer.runs() >= 1 && newer.runs() <= 3, `the step ran ${newer.runs()} times`);
});
