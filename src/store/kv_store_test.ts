/** The Store contract on Deno KV (a fresh KV file per test), and what only the KV store promises. */
import assert from "node:assert/strict";
import { batchId, keyRecord, usageRow } from "./testing/test_fixtures.ts";
import { KvStore } from "./kv_store.ts";
import type { LeaseView } from "./types.ts";
import { filesContract } from "./testing/files_contract.ts";
import { leaseCommitContract } from "./testing/lease_commit_contract.ts";
import { leaseContract } from "./testing/lease_contract.ts";
import { credit, ownedKey, payment, paymentContract } from "./testing/payment_contract.ts";
import { entry } from "./testing/shop_contract.ts";
import { sessionContract } from "./testing/session_contract.ts";
import { idempotencyContract } from "./testing/idempotency_contract.ts";
import { shopContract } from "./testing/shop_contract.ts";
import { documentsContract } from "./testing/documents_contract.ts";
import { type StoreBackend, storeContract } from "./testing/store_contract.ts";
import { usageHoursContract } from "./testing/usage_hours_contract.ts";
import { backupContract, memoryKv, postgresSchemas } from "./testing/backup_contract.ts";
import { copyThroughFile } from "../backup/testing/backup_file.ts";
import { commitOnceContract, type FaultyLocation, type WriteFault } from "./testing/commit_once_contract.ts";

const kv: StoreBackend<FaultyLocation> = {
  name: "kv",
  async fresh() {
    const dir = await Deno.makeTempDir({ prefix: "kv_store_" });
    return {
      open: () => KvStore.open(`${dir}/gateway.kv`),
      faulty: async (fault) => new KvStore(faultyKv(await Deno.openKv(`${dir}/gateway.kv`), fault)),
      remove: () => Deno.remove(dir, { recursive: true }),
    };
  },
};

/** `kv` whose atomic operations commit through `fault` (commit_once_contract.ts). */
function faultyKv(kv: Deno.Kv, fault: WriteFault): Deno.Kv {
  return new Proxy(kv, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (typeof v !== "function") return v;
      if (prop !== "atomic") return v.bind(target);
      return () => {
        const op = target.atomic();
        const commit = op.commit.bind(op);
        op.commit = () => fault.run(commit);
        return op;
      };
    },
  });
}
storeContract(kv);
filesContract(kv);
leaseContract(kv);
leaseCommitContract(kv);
documentsContract(kv);
usageHoursContract(kv);
sessionContract(kv);
idempotencyContract(kv);
shopContract(kv);
paymentContract(kv);
commitOnceContract(kv, 3); // the batch is cut into 3 atomics
backupContract(memoryKv, postgresSchemas, copyThroughFile);

/**
 * A store over `kv` whose atomic operations and reads are counted. `afterRead` (`afterGet`), when set, runs
 * once after the next `getMany` (`get`) has read and before the store sees the result: another writer slipping
 * in between a store's read and its write, or between two of its reads.
 */
function spiedStore(kv: Deno.Kv) {
  const count = { atomics: 0, reads: 0 };
  const hook: { afterRead?: () => Promise<unknown>; afterGet?: () => Promise<unknown> } = {};
  const spied = new Proxy(kv, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (typeof v !== "function") return v;
      return (...args: unknown[]) => {
        if (prop === "atomic") count.atomics++;
        if (prop === "get" || prop === "getMany" || prop === "list") count.reads++;
        const out = v.apply(target, args);
        const which = prop === "getMany" ? "afterRead" : prop === "get" ? "afterGet" : undefined;
        const after = which && hook[which];
        if (!which || after === undefined) return out;
        hook[which] = undefined;
        return (out as Promise<unknown>).then(async (read) => {
          await after();
          return read;
        });
      };
    },
  });
  return { store: new KvStore(spied), count, hook };
}

/** Two processes on one KV file: `one` spied on (spiedStore), `two` plain. */
async function sharedKv() {
  const dir = await Deno.makeTempDir({ prefix: "kv_store_" });
  const { store: one, count, hook } = spiedStore(await Deno.openKv(`${dir}/gateway.kv`));
  const two = await KvStore.open(`${dir}/gateway.kv`);
  return {
    one,
    two,
    count,
    hook,
    async [Symbol.asyncDispose]() {
      await one.close();
      await two.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** 10:30 UTC: the hour window starts at 10:00, the day window at midnight. */
const T = Date.UTC(2026, 0, 1, 10, 30);
const window = (s: { spent?: bigint; reserved?: bigint }) => ({
  hourStart: Date.UTC(2026, 0, 1, 10),
  dayStart: Date.UTC(2026, 0, 1),
  hourSpent: s.spent ?? 0n,
  daySpent: s.spent ?? 0n,
  hourReserved: s.reserved ?? 0n,
  dayReserved: s.reserved ?? 0n,
});
const funded = (id: string, credit: bigint) => keyRecord(id, { credited: credit, balance: credit });
/** A take of everything available to `holder`, recording each view its decision saw. */
const takeAll = (store: KvStore, holder: string, seen: LeaseView[]) =>
  store.takeLease({
    keyId: "key_a",
    holder,
    now: T,
    ttlMs: 60_000,
    decide(v) {
      seen.push(v);
      return { grant: v.credited - v.spent - v.leased, reserved: 0n };
    },
  });

Deno.test("KvStore.commit without lease deltas: one atomic operation, nothing read", async () => {
  const { store, count } = spiedStore(await Deno.openKv(":memory:"));
  const row = (id: string, charged: bigint) => usageRow(id, "key_a", { charged });
  await store.createKey(keyRecord("key_a", { balance: 100n, credited: 100n }));
  await store.commit({ id: batchId(), money: [], usage: [], open: [row("req_a", 1n), row("req_b", 1n)] });
  [count.atomics, count.reads] = [0, 0];
  await store.commit({
    id: batchId(),
    money: [{ keyId: "key_a", spent: 10n, credited: 0n }],
    usage: [row("req_a", 10n)],
    closed: ["req_a"],
    open: [row("req_b", 7n), row("req_c", 1n)],
    at: T,
  });
  assert.deepEqual(count, { atomics: 1, reads: 0 });
  assert.deepEqual((await store.listOpen()).map((r) => r.requestId), ["req_b", "req_c"]);
  assert.equal((await store.getKey("key_a"))!.balance, 90n);
  await store.close();
});

Deno.test("KvStore.takeLease: another process's settlement between its read and its write makes it decide again", async () => {
  await using kv = await sharedKv();
  await kv.two.createKey(funded("key_a", 100n));
  await kv.two.takeLease({
    keyId: "key_a",
    holder: "h2",
    now: T,
    ttlMs: 60_000,
    decide: () => ({ grant: 40n, reserved: 0n }),
  });
  kv.hook.afterRead = () =>
    kv.two.commit({
      id: batchId(),
      money: [{
        keyId: "key_a",
        spent: 10n,
        credited: 0n,
        lease: { holder: "h2", returned: 5n, reserved: 3n },
      }],
      usage: [],
      at: T,
    });
  const seen: LeaseView[] = [];
  const { grant } = await takeAll(kv.one, "h1", seen);
  assert.deepEqual(seen, [
    { credited: 100n, spent: 0n, leased: 40n, mine: 0n, window: window({}) },
    { credited: 100n, spent: 10n, leased: 25n, mine: 0n, window: window({ spent: 10n, reserved: 3n }) },
  ]);
  assert.equal(grant, 65n);
  assert.deepEqual(await kv.two.leaseView("key_a", "h1", T), {
    credited: 100n,
    spent: 10n,
    leased: 90n,
    mine: 65n,
    window: window({ spent: 10n, reserved: 3n }),
  });
});

Deno.test("KvStore.takeLease: a top-up summed into a counter limb that did not exist yet makes it decide again", async () => {
  await using kv = await sharedKv();
  await kv.two.createKey(funded("key_a", 100n));
  // 2^32 adds to limb 1 only: the lease book and limb 0 are untouched, the take's check of limb 1 (absent) fails.
  kv.hook.afterRead = () =>
    kv.two.commit({ id: batchId(), money: [{ keyId: "key_a", spent: 0n, credited: 1n << 32n }], usage: [] });
  const seen: LeaseView[] = [];
  const { grant } = await takeAll(kv.one, "h1", seen);
  assert.deepEqual(seen.map((v) => v.credited), [100n, 100n + (1n << 32n)]);
  assert.equal(grant, 100n + (1n << 32n));
  assert.deepEqual(await kv.two.leaseView("key_a", "h1", T), {
    credited: 100n + (1n << 32n),
    spent: 0n,
    leased: grant,
    mine: grant,
    window: window({}),
  });
});

Deno.test("KvStore.commit: a lease book changed after its read retries that atomic alone; its sums count once", async () => {
  await using kv = await sharedKv();
  await kv.two.createKey(funded("key_a", 1_000n));
  const take = (holder: string, grant: bigint) =>
    kv.two.takeLease({
      keyId: "key_a",
      holder,
      now: T,
      ttlMs: 60_000,
      decide: () => ({ grant, reserved: 0n }),
    });
  await take("h1", 100n);
  kv.hook.afterRead = () => take("h2", 200n);
  [kv.count.atomics, kv.count.reads] = [0, 0];
  await kv.one.commit({
    id: batchId(),
    money: [{
      keyId: "key_a",
      spent: 30n,
      credited: 0n,
      lease: { holder: "h1", returned: 20n, reserved: 4n },
    }],
    usage: [usageRow("req_a", "key_a", { charged: 30n })],
    closed: ["req_a"],
    at: T,
  });
  assert.deepEqual(
    kv.count,
    { atomics: 2, reads: 3 },
    "read, lost the check, read the batch's marker (absent), read again, committed",
  );
  assert.deepEqual(await kv.two.leaseView("key_a", "h1", T), {
    credited: 1_000n,
    spent: 30n,
    leased: 250n,
    mine: 50n,
    window: window({ spent: 30n, reserved: 4n }),
  });
  assert.equal((await kv.two.listUsage("key_a", { limit: 10 })).rows.length, 1);
});

Deno.test("KvStore.commit: lease deltas on more keys than one atomic may check are split, each with its sums", async () => {
  const { store, count } = spiedStore(await Deno.openKv(":memory:"));
  const ids = Array.from({ length: 200 }, (_, i) => `key_${i}`);
  for (const id of ids) {
    await store.createKey(funded(id, 100n));
    await store.takeLease({
      keyId: id,
      holder: "h1",
      now: T,
      ttlMs: 60_000,
      decide: () => ({ grant: 50n, reserved: 0n }),
    });
  }
  count.atomics = 0;
  await store.commit({
    id: batchId(),
    money: ids.map((keyId) => ({
      keyId,
      spent: 10n,
      credited: 0n,
      lease: { holder: "h1", returned: 5n, reserved: 0n },
    })),
    usage: [],
    at: T,
  });
  assert.equal(count.atomics, 3, "Deno KV checks at most 100 keys per atomic: 90 + 90 + 20");
  for (const id of ids) {
    assert.deepEqual(await store.leaseView(id, "h1", T), {
      credited: 100n,
      spent: 10n,
      leased: 35n,
      mine: 35n,
      window: window({ spent: 10n }),
    });
  }
  await store.close();
});

Deno.test("KvStore.refundPayment: a refund committed between its payment read and its money read makes it not_refundable", async () => {
  await using kv = await sharedKv();
  await ownedKey(kv.two);
  await kv.two.createPayment(payment("pay_1"));
  await kv.two.settlePayment(credit("pay_1", "ch_1"));
  const debit = entry("key_a", "le_r1", 100n, { kind: "debit", reference: "refund:pay_1", createdAt: T + 5 });
  // The other process refunds after this one read the payment (still credited) and before it reads the money.
  kv.hook.afterGet = () => kv.two.refundPayment("pay_1", { ...debit, id: "le_r2" }, T + 5);
  const r = await kv.one.refundPayment("pay_1", debit, T + 5);
  assert.equal(r.outcome, "not_refundable"); // not "insufficient": that read the money after the other's debit
  assert.equal(r.payment.status, "refunded");
  const k = (await kv.two.getKey("key_a"))!;
  assert.deepEqual([k.credited, k.balance], [50n, 50n], "debited once");
});

Deno.test("KvStore.watchDocument: another process's change wakes it within the poll (kv.watch alone would not)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "kv_store_" });
  const path = `${dir}/gateway.kv`;
  const store = await KvStore.open(path);
  let calls = 0;
  const stop = store.watchDocument("d", () => calls++);
  try {
    await new Promise((r) => setTimeout(r, 300));
    calls = 0;
    // Another process writes the document (denoland/deno#21640: no watch of this process hears it).
    const code = `import { KvStore } from ${JSON.stringify(new URL("./kv_store.ts", import.meta.url).href)};
      const s = await KvStore.open(${JSON.stringify(path)});
      await s.updateDocument("d", () => ({ doc: { n: 1 }, result: null }));
      await s.close();`;
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["eval", "--unstable-kv", code],
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    const written = Date.now();
    while (calls === 0 && Date.now() - written < 1_000) await new Promise((r) => setTimeout(r, 10));
    assert.equal(calls, 1, "one call for the one change, within a second");
    assert.deepEqual(await store.updateDocument("d", (doc) => ({ doc: null, result: doc })), { n: 1 });
  } finally {
    stop();
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("KvStore: a document and a set's members of before (their KV keys unchanged) are read by the names their callers use", async () => {
  const kv = await Deno.openKv(":memory:");
  const store = new KvStore(kv);
  try {
    await kv.set(["theta_pool"], new TextEncoder().encode(JSON.stringify({ seq: 3 })));
    const loop = { keyId: "k1", id: "l1", callIds: ["call_a"], updatedAt: 100, expiresAt: 10_000 };
    await kv.set(["tool_loop", "k1", "l1"], loop);
    assert.deepEqual(await store.updateDocument("theta_pool", (d) => ({ doc: null, result: d })), { seq: 3 });
    assert.deepEqual(await store.listMembers("tool_loop", "k1", 200), [loop]);
  } finally {
    await store.close();
  }
});

Deno.test("KvStore: a document or set named like one of the store's own records is refused", async () => {
  const store = await KvStore.open(":memory:");
  try {
    await assert.rejects(store.updateDocument("tariff", () => ({ doc: { x: 1 }, result: null })), /reserved/);
    await assert.rejects(store.listMembers("key", "k1", 0), /reserved/);
  } finally {
    await store.close();
  }
});
