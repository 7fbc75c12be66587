/**
 * The contract of a commit's batch id (CommitBatch.id, batch_id.ts), on every backend: a commit that failed
 * part-way, or whose reply was lost after it was applied, retried with the same batch is applied exactly once —
 * money, lease and windows, settled checkpoints, usage rows, hourly sums, new checkpoints. Faults are injected
 * under the store: the backend opens a store on the same location whose writes (a KV atomic commit, the
 * Postgres commit statement) go through a WriteFault, which fails its `nth` write once, before running it or
 * after (the reply lost).
 */
import assert from "node:assert/strict";
import { MAX_BATCH_ID } from "../batch_id.ts";
import { HOUR, HOUR_10, T, take, win } from "./lease_fixtures.ts";
import { contractTest, type StoreBackend, type StoreLocation } from "./store_contract.ts";
import type { Store } from "../store.ts";
import { batchId, keyRecord, usageRow } from "./test_fixtures.ts";
import type { CommitBatch } from "../types.ts";
import { allRows, expectedHours } from "./usage_hours_contract.ts";

/** Fails the `nth` write (from 1; 0: none) given to `run` once: before it runs, or `after` it ran. */
export class WriteFault {
  /** Writes seen so far. */
  writes = 0;

  constructor(readonly nth = 0, readonly after = false) {}

  async run<T>(write: () => Promise<T>): Promise<T> {
    if (++this.writes !== this.nth) return write();
    if (this.after) await write();
    throw new Error(`injected: write ${this.nth} ${this.after ? "applied, its reply lost" : "failed"}`);
  }
}

/** A location that can also open a store whose writes go through `fault`. */
export interface FaultyLocation extends StoreLocation {
  faulty(fault: WriteFault): Promise<Store>;
}

/** Rows per batch, each with a request id of ID_TAIL characters more than the one before shares: on KV more
 *  than two atomics hold them (kv_usage_hours.ts cuts them at MAX_VALUE_BYTES). */
const ROWS = 3_600;
const ID_TAIL = "x".repeat(300);

/** The case `p`'s keys and its batch: a plain money delta, a lease delta, a settled checkpoint, ROWS rows
 *  of one hour, a new checkpoint. */
function caseBatch(p: string): CommitBatch {
  const usage = Array.from({ length: ROWS }, (_, i) =>
    usageRow(`req_${p}_${i}_${ID_TAIL}`, `${p}_a`, {
      createdAt: HOUR_10 + i,
      inputTokens: i,
      outputTokens: 2 * i,
      charged: BigInt(1_000 + i),
    }));
  return {
    id: batchId(),
    money: [
      { keyId: `${p}_a`, spent: 7n, credited: 100n },
      { keyId: `${p}_b`, spent: 5n, credited: 0n, lease: { holder: "h", returned: 10n, reserved: 3n } },
    ],
    usage,
    closed: [`req_${p}_old`],
    open: [usageRow(`req_${p}_open`, `${p}_a`)],
    at: T,
  };
}

/** The keys of case `p`, `${p}_b` with a lease of 50 held by "h", and the checkpoint its batch settles. */
async function setUp(store: Store, p: string): Promise<void> {
  await store.createKey(keyRecord(`${p}_a`, { hash: `hash_${p}_a` }));
  await store.createKey(keyRecord(`${p}_b`, { hash: `hash_${p}_b`, credited: 1_000n, balance: 1_000n }));
  assert.equal((await take(store, `${p}_b`, "h", T, 50n, 0n, HOUR)).grant, 50n);
  await store.commit({ id: batchId(), money: [], usage: [], open: [usageRow(`req_${p}_old`, `${p}_a`)] });
}

/** What case `p`'s batch leaves once applied once. */
async function assertOnce(store: Store, p: string, batch: CommitBatch): Promise<void> {
  const a = await store.getKey(`${p}_a`);
  assert.deepEqual([a?.spent, a?.credited], [7n, 100n], `${p}: money`);
  assert.equal((await store.getKey(`${p}_b`))?.spent, 5n, `${p}: money with a lease`);
  const view = await store.leaseView(`${p}_b`, "h", T);
  assert.equal(view?.mine, 35n, `${p}: the lease shrinks by spent + returned`);
  assert.deepEqual(view?.window, win({ hs: 5n, ds: 5n, hr: 3n, dr: 3n }), `${p}: the windows`);
  const rows = await allRows(store, `${p}_a`);
  assert.equal(rows.length, ROWS, `${p}: usage rows`);
  assert.deepEqual(
    await store.usageHours(`${p}_a`, HOUR_10, HOUR_10 + HOUR),
    expectedHours(batch.usage, HOUR_10, HOUR_10 + HOUR),
    `${p}: hourly sums`,
  );
  const open = (await store.listOpen()).map((u) => u.requestId).filter((id) => id.startsWith(`req_${p}_`));
  assert.deepEqual(open, [`req_${p}_open`], `${p}: checkpoints`);
}

export function commitOnceContract(
  backend: StoreBackend<FaultyLocation>,
  /** How many writes `caseBatch` takes on this backend (KV: atomics; Postgres: one statement). */
  writes: number,
): void {
  const test = contractTest(backend);

  test(
    "a batch retried after a failure at any of its writes, before or after it applied, applies once",
    async ({ store }, where) => {
      const probe = new WriteFault();
      const counted = await where.faulty(probe);
      try {
        await setUp(store, "probe");
        const batch = caseBatch("probe");
        await counted.commit(batch);
        assert.equal(probe.writes, writes, "the batch's writes");
        await assertOnce(store, "probe", batch);
      } finally {
        await counted.close();
      }
      for (let nth = 1; nth <= writes; nth++) {
        for (const after of [false, true]) {
          const p = `c${nth}${after ? "after" : "before"}`;
          const fault = new WriteFault(nth, after);
          const faulty = await where.faulty(fault);
          try {
            await setUp(store, p);
            const batch = caseBatch(p);
            await assert.rejects(faulty.commit(batch), /injected/);
            await faulty.commit(batch); // the committer's retry: the same batch, the same id
            await assertOnce(store, p, batch);
            await store.commit(batch); // once more, long after: nothing
            await assertOnce(store, p, batch);
          } finally {
            await faulty.close();
          }
        }
      }
    },
  );

  test("a batch id committed before applies nothing; another id applies the same changes again", async ({ store }) => {
    await store.createKey(keyRecord("key_a"));
    const batch = { id: batchId(), money: [{ keyId: "key_a", spent: 0n, credited: 5n }], usage: [] };
    await store.commit(batch);
    await store.commit({ ...batch });
    assert.equal((await store.getKey("key_a"))?.credited, 5n);
    await store.commit({ ...batch, id: batchId() });
    assert.equal((await store.getKey("key_a"))?.credited, 10n);
  });

  test("a batch id empty or too long is refused, nothing written", async ({ store }) => {
    await store.createKey(keyRecord("key_a"));
    const money = [{ keyId: "key_a", spent: 0n, credited: 5n }];
    for (const id of ["", "x".repeat(MAX_BATCH_ID + 1)]) {
      await assert.rejects(store.commit({ id, money, usage: [] }), RangeError);
    }
    await store.commit({ id: "x".repeat(MAX_BATCH_ID), money, usage: [] });
    assert.equal((await store.getKey("key_a"))?.credited, 5n);
  });
}
