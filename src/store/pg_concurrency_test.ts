/**
 * What only the Postgres store promises about processes working on the same keys at once: every sum exact
 * whatever the interleaving, and rows locked in one order (keys by id, then their leases), so that two
 * processes never deadlock. Needs TEST_DATABASE_URL (CI sets it); without it these are ignored.
 */
import assert from "node:assert/strict";
import { connect, type Sql } from "./pg_connect.ts";
import { PgStore } from "./pg_store.ts";
import { pgTest } from "./testing/pg_test_schema.ts";
import { HOUR, T } from "./testing/lease_fixtures.ts";
import { batchId, keyRecord } from "./testing/test_fixtures.ts";

pgTest(
  "processes committing, taking and renewing on the same keys at once, in every order: every sum exact",
  async (s) => {
    const stores = await Promise.all([0, 1, 2].map(() => PgStore.open(s.url)));
    try {
      const keys = ["k0", "k1", "k2", "k3", "k4", "k5"];
      const initial = 1_000n, rounds = 12;
      const take = (store: PgStore, keyId: string, holder: string, grant: bigint) =>
        store.takeLease({ keyId, holder, now: T, ttlMs: HOUR, decide: () => ({ grant, reserved: 0n }) });
      for (const id of keys) {
        await stores[0]!.createKey(keyRecord(id, { credited: 1_000_000n, balance: 1_000_000n }));
        for (const [i, store] of stores.entries()) await take(store, id, `h${i}`, initial);
      }
      const took = new Map<string, bigint>(); // `${key} ${holder}` → grants in the rounds
      // Each process (holder) per round: a commit settling 1 from its lease on every key, takes of 1 on
      // half of them and a renewal of all, at once; the key order differs by round and by process.
      await Promise.all(stores.map(async (store, i) => {
        const holder = `h${i}`;
        for (let round = 0; round < rounds; round++) {
          const order = keys.map((_, j) => keys[(j + round + i) % keys.length]!);
          if ((round + i) % 2 === 1) order.reverse();
          const lease = { holder, returned: 0n, reserved: 1n };
          const half = order.slice(0, keys.length / 2);
          for (const keyId of half) {
            took.set(`${keyId} ${holder}`, (took.get(`${keyId} ${holder}`) ?? 0n) + 1n);
          }
          const [, , renewed] = await Promise.all([
            store.commit({
              id: batchId(),
              money: order.map((keyId) => ({ keyId, spent: 1n, credited: 0n, lease })),
              usage: [],
              at: T,
            }),
            Promise.all(half.map((keyId) => take(store, keyId, holder, 1n))),
            store.renewLeases(holder, order, T, HOUR),
          ]);
          assert.deepEqual([...renewed].sort(), [...keys]);
        }
      }));
      const spent = BigInt(stores.length * rounds);
      for (const id of keys) {
        const mine = stores.map((_, i) => initial - BigInt(rounds) + (took.get(`${id} h${i}`) ?? 0n));
        assert.deepEqual(await stores[1]!.leaseView(id, "h0", T), {
          credited: 1_000_000n,
          spent,
          leased: mine.reduce((a, b) => a + b),
          mine: mine[0],
          window: {
            hourStart: T - T % HOUR,
            dayStart: Date.UTC(2026, 0, 1),
            hourSpent: spent,
            daySpent: spent,
            hourReserved: spent,
            dayReserved: spent,
          },
        });
      }
    } finally {
      for (const store of stores) await store.close();
    }
  },
);

pgTest(
  "lock order, whatever the order given: a commit locks its keys by id, then its leases by key; a renewal too",
  async (s) => {
    const store = await PgStore.open(s.url);
    const other = connect(s.url, "test other transaction", { max: 1 });
    const probe = connect(s.url, "test probe", { max: 1 });
    try {
      // Created against the id order (and named so that hashing puts kb first too): unsorted, kb would be
      // locked first.
      for (const id of ["kb", "ka"]) {
        await store.createKey(keyRecord(id, { credited: 100n, balance: 100n }));
        await store.takeLease({
          keyId: id,
          holder: "h",
          now: T,
          ttlMs: HOUR,
          decide: () => ({ grant: 50n, reserved: 0n }),
        });
      }
      const lease = { holder: "h", returned: 0n, reserved: 0n };
      const commit = () =>
        store.commit({
          id: batchId(),
          money: ["kb", "ka"].map((keyId) => ({ keyId, spent: 1n, credited: 0n, lease })),
          usage: [],
          at: T,
        });
      const keyRow = (id: string) => ({ table: "keys", where: `id = '${id}'` });
      const leaseRow = (id: string) => ({ table: "leases", where: `key_id = '${id}' AND holder = 'h'` });
      const cases = [
        { held: keyRow("kb"), write: commit, first: keyRow("ka") },
        { held: leaseRow("kb"), write: commit, first: leaseRow("ka") },
        {
          held: leaseRow("kb"),
          write: () => store.renewLeases("h", ["kb", "ka"], T, HOUR),
          first: leaseRow("ka"),
        },
      ];
      for (const c of cases) {
        // Another transaction holds kb's row; the write must have locked ka's before waiting for it.
        let written: Promise<unknown> | undefined;
        try {
          await other.begin(async (tx) => {
            const [me] = await tx`SELECT pg_backend_pid() AS pid`;
            await tx.unsafe(`SELECT 1 FROM ${c.held.table} WHERE ${c.held.where} FOR UPDATE`);
            written = c.write();
            await waitingOn(probe, me!.pid);
            await assert.rejects(
              probe.unsafe(`SELECT 1 FROM ${c.first.table} WHERE ${c.first.where} FOR UPDATE NOWAIT`),
              (e: { code?: string }) => e.code === "55P03",
              `${c.first.table} ${c.first.where} is locked first`,
            );
          });
        } finally {
          await written;
        }
      }
      const view = await store.leaseView("ka", "h", T);
      assert.equal(view!.spent, 2n);
      assert.equal(view!.mine, 48n);
    } finally {
      await probe.end();
      await other.end();
      await store.close();
    }
  },
);

/** Resolves once a session waits for a lock that the session `pid` holds. */
async function waitingOn(sql: Sql, pid: number): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const [row] = await sql`
      SELECT count(*)::int AS n FROM pg_stat_activity WHERE ${pid}::int = ANY(pg_blocking_pids(pid))`;
    if (row!.n > 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`nothing waits on ${pid}`);
}
