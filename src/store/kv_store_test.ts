/** The Store contract on Deno KV (a fresh KV file per test), and what only the KV store promises. */
import assert from "node:assert/strict";
import { keyRecord, usageRow } from "./test_fixtures.ts";
import { KvStore } from "./kv_store.ts";
import { leaseContract } from "./lease_contract.ts";
import { type StoreBackend, storeContract } from "./store_contract.ts";

const kv: StoreBackend = {
  name: "kv",
  async fresh() {
    const dir = await Deno.makeTempDir({ prefix: "kv_store_" });
    return {
      open: () => KvStore.open(`${dir}/gateway.kv`),
      remove: () => Deno.remove(dir, { recursive: true }),
    };
  },
};
storeContract(kv);
leaseContract(kv);

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

Deno.test("KvStore.commit: balance, row, deleted and refreshed checkpoints in one atomic operation", async () => {
  const { store, atomics } = await countingStore();
  const row = (id: string, charged: bigint) => usageRow(id, "key_a", { charged });
  await store.createKey(keyRecord("key_a", { balance: 100n, credited: 100n }));
  await store.commit({ money: [], usage: [], open: [row("req_a", 1n), row("req_b", 1n)] });
  atomics.n = 0;
  await store.commit({
    money: [{ keyId: "key_a", spent: 10n, credited: 0n }],
    usage: [row("req_a", 10n)],
    closed: ["req_a"],
    open: [row("req_b", 7n), row("req_c", 1n)],
  });
  assert.equal(atomics.n, 1);
  assert.deepEqual((await store.listOpen()).map((r) => r.requestId), ["req_b", "req_c"]);
  await store.close();
});
