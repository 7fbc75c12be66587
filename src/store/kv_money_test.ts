import assert from "node:assert/strict";
import { keyRecord, usageRow } from "./test_fixtures.ts";
import { Accounts } from "../accounts/accounts.ts";
import { KvStore } from "./kv_store.ts";
import { kvKeys } from "./kv_keys.ts";
import type { KeyRecord, UsageRow } from "./types.ts";

function keyRec(id: string, money: { balance: bigint; credited: bigint; spent: bigint }): KeyRecord {
  return keyRecord(id, {
    name: `name ${id}`,
    ...money,
    caps: { hourlySpend: null, dailySpend: 5n, hourlyReserve: null, dailyReserve: null },
  });
}

function checkpoint(requestId: string, keyId: string, charged: bigint): UsageRow {
  return usageRow(requestId, keyId, {
    endpoint: "/v1/messages",
    status: "cancelled",
    reserved: 500n,
    charged,
    usageSource: "estimated",
  });
}

async function tempKv(): Promise<{ path: string; done: () => Promise<void> }> {
  const dir = await Deno.makeTempDir({ prefix: "gw-kv-money-" });
  return { path: `${dir}/gateway.kv`, done: () => Deno.remove(dir, { recursive: true }) };
}

Deno.test("a store of the older format (money inside the key record) loads with the same money", async () => {
  const tmp = await tempKv();
  // Written the way the previous KvStore wrote it: whole records, set.
  const old = await Deno.openKv(tmp.path);
  const a = keyRec("key_a", { balance: 700n, credited: 1_000n, spent: 300n });
  const b = keyRec("key_b", {
    balance: 999_999_999_999_999_999_999_999_999n,
    credited: 10n ** 27n,
    spent: 1n,
  });
  const odd = keyRec("key_odd", { balance: 50n, credited: 40n, spent: 10n }); // identity broken: balance wins
  for (const r of [a, b, odd]) {
    await old.set(["key", r.id], r);
    await old.set(["key_by_hash", r.hash], r.id);
  }
  await old.set(["open", "req_cut"], checkpoint("req_cut", "key_a", 20n));
  old.close();

  const store = await KvStore.open(tmp.path);
  assert.deepEqual(await store.getKey("key_a"), a, "read before migration");
  const accounts = await Accounts.load(store);
  const accA = accounts.get("key_a")!;
  assert.deepEqual(
    [accA.rec.balance, accA.rec.credited, accA.rec.spent],
    [680n, 1_000n, 320n],
    "checkpoint settled",
  );
  assert.deepEqual(accounts.get("key_b")!.rec, b);
  assert.deepEqual(accounts.get("key_odd")!.rec, { ...odd, credited: 60n });
  assert.deepEqual(accounts.get("key_a")!.rec.caps, a.caps, "metadata kept");
  await accounts.close();
  store.close();

  // Migrated: the key record holds metadata only, money is in counters; a second load changes nothing.
  const raw = await Deno.openKv(tmp.path);
  const meta = (await raw.get<Record<string, unknown>>(["key", "key_a"])).value!;
  assert.equal("balance" in meta || "spent" in meta || "credited" in meta, false);
  assert.equal((await raw.get(kvKeys.money("key_a", "spent", 0))).value !== null, true);
  raw.close();
  const again = await KvStore.open(tmp.path);
  const keys = new Map((await again.listKeys()).map((r) => [r.id, r]));
  assert.deepEqual([keys.get("key_a")!.balance, keys.get("key_a")!.spent], [680n, 320n]);
  assert.deepEqual(keys.get("key_b"), b);
  assert.equal(keys.get("key_odd")!.balance, 50n);
  assert.deepEqual(await again.listOpen(), []);
  again.close();
  await tmp.done();
});

Deno.test("two store writers adding spend to the same key both count", async () => {
  const tmp = await tempKv();
  const one = await KvStore.open(tmp.path);
  const two = await KvStore.open(tmp.path);
  await one.createKey(keyRec("key_a", { balance: 10n ** 20n, credited: 10n ** 20n, spent: 0n }));
  let expected = 0n;
  const writer = async (store: KvStore, tag: string) => {
    for (let i = 0; i < 50; i++) {
      // Pieces in every limb, so carries between limbs are exercised too.
      const spent = BigInt(i + 1) * 0xffff_ffffn + (tag === "one" ? 1n : 2n ** 40n);
      expected += spent;
      await store.commit({ money: [{ keyId: "key_a", spent, credited: 0n }], usage: [] });
    }
  };
  await Promise.all([writer(one, "one"), writer(two, "two")]);
  const rec = (await one.getKey("key_a"))!;
  assert.equal(rec.spent, expected);
  assert.equal(rec.balance, 10n ** 20n - expected);
  assert.deepEqual((await two.listKeys()).map((r) => r.spent), [expected]);
  one.close();
  two.close();
  await tmp.done();
});

Deno.test("KvStore.updateKey writes metadata only; money counters are untouched", async () => {
  const store = await KvStore.open(":memory:");
  const rec = keyRec("key_a", { balance: 100n, credited: 100n, spent: 0n });
  await store.createKey(rec);
  await store.commit({ money: [{ keyId: "key_a", spent: 30n, credited: 5n }], usage: [] });
  // A writer with a stale view of the money cannot overwrite it.
  await store.updateKey({ ...rec, revoked: true });
  assert.deepEqual(await store.getKey("key_a"), {
    ...rec,
    revoked: true,
    balance: 75n,
    credited: 105n,
    spent: 30n,
  });
  store.close();
});
