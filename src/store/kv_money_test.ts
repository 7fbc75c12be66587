import assert from "node:assert/strict";
import { keyRecord, usageRow } from "./testing/test_fixtures.ts";
import { Accounts } from "../accounts/accounts.ts";
import { KvStore } from "./kv_store.ts";
import { kvKeys } from "./kv_keys.ts";
import type { KeyRecord, UsageRow } from "./types.ts";
import { Logger } from "../util/log.ts";

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
  const accounts = await Accounts.load(store, new Logger("error", () => {}));
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
