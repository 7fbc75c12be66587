/**
 * The Store contract on Postgres (a fresh schema per test), and what only the Postgres store promises:
 * migrations applied once under concurrency, one atomic statement per commit, the report's index, the sweep,
 * a pool's channel per schema. Processes at once and the order rows are locked in: pg_concurrency_test.ts.
 * Needs TEST_DATABASE_URL (CI sets it); without it these are ignored.
 */
import assert from "node:assert/strict";
import { connect, type Sql } from "./pg_connect.ts";
import { migrate, MIGRATIONS } from "./pg_migrations.ts";
import { PgStore } from "./pg_store.ts";
import { BATCH_ID_TTL_MS } from "./batch_id.ts";
import { freshSchema, pgTest, TEST_DATABASE_URL } from "./testing/pg_test_schema.ts";
import { filesContract } from "./testing/files_contract.ts";
import { leaseCommitContract } from "./testing/lease_commit_contract.ts";
import { leaseContract } from "./testing/lease_contract.ts";
import { T } from "./testing/lease_fixtures.ts";
import { paymentContract } from "./testing/payment_contract.ts";
import { sessionContract } from "./testing/session_contract.ts";
import { idempotencyContract } from "./testing/idempotency_contract.ts";
import { shopContract } from "./testing/shop_contract.ts";
import { documentsContract } from "./testing/documents_contract.ts";
import { type StoreBackend, storeContract } from "./testing/store_contract.ts";
import { usageHoursContract } from "./testing/usage_hours_contract.ts";
import { backupContract, memoryKv } from "./testing/backup_contract.ts";
import { copyThroughFile } from "../backup/testing/backup_file.ts";
import { commitOnceContract, type FaultyLocation, type WriteFault } from "./testing/commit_once_contract.ts";
import { batchId, keyRecord, usageRow } from "./testing/test_fixtures.ts";

const postgres: StoreBackend<FaultyLocation> = {
  name: "postgres",
  ...(TEST_DATABASE_URL ? {} : { skip: "TEST_DATABASE_URL unset" }),
  async fresh() {
    const schema = await freshSchema();
    return {
      open: () => PgStore.open(schema.url),
      faulty: (fault) => PgStore.open(schema.url, undefined, undefined, (sql) => faultySql(sql, fault)),
      remove: schema.drop,
    };
  },
};

/** `sql` whose commit statements (pg_commit.ts COMMIT_SQL, the one that writes usage rows) run through `fault`
 *  (commit_once_contract.ts): after it, the statement committed and its reply is lost. */
function faultySql(sql: Sql, fault: WriteFault): Sql {
  return new Proxy(sql, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (prop !== "unsafe") return v;
      return (query: string, ...rest: unknown[]) => {
        const run = () => (target.unsafe as (...args: unknown[]) => Promise<unknown>)(query, ...rest);
        return query.includes("INSERT INTO usage_rows") ? fault.run(run) : run();
      };
    },
  });
}
storeContract(postgres);
filesContract(postgres);
leaseContract(postgres);
leaseCommitContract(postgres);
documentsContract(postgres);
usageHoursContract(postgres);
sessionContract(postgres);
idempotencyContract(postgres);
shopContract(postgres);
paymentContract(postgres);
commitOnceContract(postgres, 1); // one statement
backupContract(postgres, memoryKv, copyThroughFile);

pgTest(
  "migrations: two processes starting at once apply each version once; a reopen applies none",
  async (s) => {
    const [a, b] = await Promise.all([PgStore.open(s.url), PgStore.open(s.url)]);
    await Promise.all([a.close(), b.close()]);
    const sql = connect(s.url, "test");
    try {
      const rows = await sql`SELECT version, name FROM schema_migrations ORDER BY version`;
      assert.deepEqual(rows.map((r) => r.version), MIGRATIONS.map((m) => m.version));
      assert.deepEqual(await migrate(sql), [], "nothing left to apply");
      // A new version is applied once, and a failing one leaves nothing behind (one transaction).
      const next = MIGRATIONS.length + 1;
      const added = { version: next, name: "test column", sql: "ALTER TABLE keys ADD COLUMN note text" };
      assert.deepEqual(await migrate(sql, [...MIGRATIONS, added]), [next]);
      assert.deepEqual(await migrate(sql, [...MIGRATIONS, added]), []);
      const broken = { version: next + 1, name: "broken", sql: "CREATE TABLE half (x int); SELECT nonsense" };
      await assert.rejects(migrate(sql, [...MIGRATIONS, added, broken]), /nonsense/);
      const [half] = await sql`SELECT to_regclass('half') AS t`;
      assert.equal(half!.t, null);
      assert.equal((await sql`SELECT 1 FROM schema_migrations WHERE version = ${next + 1}`).length, 0);
    } finally {
      await sql.end();
    }
  },
);

pgTest(
  "migration 11 moves the one pool document and the tool loops of before under the names their callers use",
  async (s) => {
    const sql = connect(s.url, "test");
    try {
      await migrate(sql, MIGRATIONS.filter((m) => m.version < 11));
      await sql`UPDATE theta_pool SET doc = ${sql.json({ queue: ["k"], seq: 3 })}`;
      await sql`
        INSERT INTO tool_loops (key_id, id, call_ids, updated_at, expires_at)
        VALUES ('k1', 'l1', ${sql.json(["call_a"])}, 100, 10000), ('k1', 'l0', ${
        sql.json(["call_b"])
      }, 50, 9000)`;
    } finally {
      await sql.end();
    }
    const store = await PgStore.open(s.url);
    try {
      const doc = await store.updateDocument("theta_pool", (d) => ({ doc: null, result: d }));
      assert.deepEqual(doc, { queue: ["k"], seq: 3 });
      assert.deepEqual(await store.listMembers("tool_loop", "k1", 200), [
        { keyId: "k1", id: "l0", callIds: ["call_b"], updatedAt: 50, expiresAt: 9000 },
        { keyId: "k1", id: "l1", callIds: ["call_a"], updatedAt: 100, expiresAt: 10000 },
      ]);
      assert.deepEqual(await store.listMembers("tool_loop", "k1", 9500), [
        { keyId: "k1", id: "l1", callIds: ["call_a"], updatedAt: 100, expiresAt: 10000 },
      ]);
    } finally {
      await store.close();
    }
  },
);

pgTest(
  "migration 12 moves theta's columns into the keys' family settings, for keys with other than the defaults",
  async (s) => {
    const sql = connect(s.url, "test");
    try {
      await migrate(sql, MIGRATIONS.filter((m) => m.version < 12));
      const row = (id: string, paused: boolean, hour: number | null, day: number | null) =>
        sql`INSERT INTO keys (id, hash, hint, created_at, revoked, theta_paused, theta_hourly_requests,
          theta_daily_requests, credited, spent)
          VALUES (${id}, ${"hash_" + id}, 'gd-abc', 1, false, ${paused}, ${hour}, ${day}, 0, 0)`;
      await row("key_d", false, null, null);
      await row("key_p", true, null, null);
      await row("key_l", false, 5, 0);
    } finally {
      await sql.end();
    }
    const store = await PgStore.open(s.url);
    try {
      assert.deepEqual((await store.listKeys()).map((k) => [k.id, k.families]), [
        ["key_d", {}],
        ["key_l", { theta: { paused: false, hourlyRequests: 5, dailyRequests: 0 } }],
        ["key_p", { theta: { paused: true, hourlyRequests: null, dailyRequests: null } }],
      ]);
    } finally {
      await store.close();
    }
  },
);

pgTest(
  "family settings of the wrong shape read as none: the key is still served",
  async (s) => {
    const store = await PgStore.open(s.url);
    const sql = connect(s.url, "test");
    try {
      await store.createKey(keyRecord("key_a"));
      await sql`UPDATE keys SET family_settings = ${
        sql.json({
          theta: { paused: "yes" },
          alpha: { paused: true, hourlyRequests: 1, dailyRequests: null },
        })
      }`;
      assert.deepEqual((await store.getKey("key_a"))?.families, {
        alpha: { paused: true, hourlyRequests: 1, dailyRequests: null },
      });
      await sql`UPDATE keys SET family_settings = '[1]'::jsonb`;
      assert.deepEqual((await store.getKeyByHash("hash_key_a"))?.families, {});
    } finally {
      await sql.end();
      await store.close();
    }
  },
);

pgTest(
  "commit is one statement: a batch that fails moves no money, no lease, no window, no checkpoint",
  async (s) => {
    const store = await PgStore.open(s.url);
    try {
      await store.createKey(keyRecord("key_a", { balance: 100n, credited: 100n }));
      await store.commit({ id: batchId(), money: [], usage: [], open: [usageRow("req_a", "key_a")] });
      const decide = () => ({ grant: 50n, reserved: 5n });
      await store.takeLease({ keyId: "key_a", holder: "h1", now: T, ttlMs: 60_000, decide });
      const view = await store.leaseView("key_a", "h1", T);
      const tooBig = usageRow("req_b", "key_a", { charged: 10n ** 41n }); // beyond numeric(40,0)
      const lease = { holder: "h1", returned: 10n, reserved: 3n };
      await assert.rejects(
        store.commit({
          id: batchId(),
          money: [{ keyId: "key_a", spent: 10n, credited: 0n, lease }],
          usage: [usageRow("req_a", "key_a"), tooBig],
          closed: ["req_a"],
          at: T,
        }),
        /numeric field overflow/,
      );
      assert.equal((await store.getKey("key_a"))!.balance, 100n);
      assert.deepEqual(await store.leaseView("key_a", "h1", T), view);
      assert.equal(view!.mine, 50n);
      assert.equal(view!.window.hourReserved, 5n);
      assert.deepEqual((await store.listOpen()).map((r) => r.requestId), ["req_a"]);
      assert.deepEqual((await store.listUsage("key_a", { limit: 5 })).rows, []);
      for (
        const money of [
          { keyId: "key_a", spent: -1n, credited: 0n },
          { keyId: "key_a", spent: 0n, credited: 0n, lease: { ...lease, returned: -1n } },
          { keyId: "key_a", spent: 0n, credited: 0n, lease: { ...lease, reserved: -1n } },
        ]
      ) {
        await assert.rejects(store.commit({ id: batchId(), money: [money], usage: [], at: T }), RangeError);
      }
      await assert.rejects(
        store.commit({
          id: batchId(),
          money: [{ keyId: "key_a", spent: 1n, credited: 0n, lease }],
          usage: [],
        }),
        RangeError,
        "a lease delta needs the batch's at",
      );
      assert.deepEqual(await store.leaseView("key_a", "h1", T), view);
    } finally {
      await store.close();
    }
  },
);

pgTest("the usage report's page is an index range in the report's order (no sort)", async (s) => {
  const store = await PgStore.open(s.url);
  const sql = connect(s.url, "test", { max: 1 });
  try {
    await store.commit({ id: batchId(), money: [], usage: [usageRow("req_a", "key_a")] });
    await sql`SET enable_seqscan = off`;
    const plan = (await sql`
      EXPLAIN SELECT * FROM usage_rows
      WHERE key_id = ${"key_a"} AND created_at <= ${"5"} AND (created_at < ${"5"} OR request_id > ${"r"})
      ORDER BY created_at DESC, request_id LIMIT 20`).map((r) => r["QUERY PLAN"]).join("\n");
    assert.match(plan, /Index Scan using usage_rows_report/);
    assert.doesNotMatch(plan, /Sort/);
  } finally {
    await sql.end();
    await store.close();
  }
});

pgTest("the sweep deletes every expired file, set member, lease and session, and nothing live", async (s) => {
  const store = await PgStore.open(s.url);
  try {
    const quota = { maxFiles: 5, maxBytes: 1_000 };
    const file = (id: string, keyId: string, expiresAt: number) => ({
      id,
      keyId,
      filename: "a.txt",
      purpose: "assistants",
      contentType: "text/plain",
      bytes: 1,
      createdAt: 0,
      expiresAt,
      storedBytes: 1,
    });
    const one = new Uint8Array([1]);
    await store.putFile(file("f_old", "k1", 100), one, one, quota);
    await store.putFile(file("f_old", "k2", 100), one, one, quota);
    await store.putFile(file("f_new", "k1", 1_000), one, one, quota);
    const member = (id: string, expiresAt: number) => ({ id, values: ["c"], expiresAt });
    await store.updateMembers("test_set", "k1", { remove: [], put: member("l_old", 100) }, 0);
    await store.updateMembers("test_set", "k1", { remove: [], put: member("l_new", 1_000) }, 0);
    await store.createKey(keyRecord("k1", { credited: 100n, balance: 100n }));
    const take = (holder: string, ttlMs: number) =>
      store.takeLease({ keyId: "k1", holder, now: 0, ttlMs, decide: () => ({ grant: 10n, reserved: 0n }) });
    await take("h_old", 100);
    await take("h_edge", 500); // expires at 500: expired at 500
    await take("h_new", 501);
    const session = (hash: string, expiresAt: number) => ({
      hash,
      keyId: "k1",
      keyHash: "h1",
      createdAt: 0,
      expiresAt,
    });
    await store.putSession(session("s_old", 100));
    await store.putSession(session("s_edge", 500));
    await store.putSession(session("s_new", 501));
    await store.sweep(500);
    const sql = connect(s.url, "test");
    try {
      assert.deepEqual(
        (await sql`SELECT key_id, id FROM files ORDER BY key_id, id`).map((r) => `${r.key_id}/${r.id}`),
        [
          "k1/f_new",
        ],
      );
      assert.deepEqual((await sql`SELECT id FROM expiring_members`).map((r) => r.id), ["l_new"]);
      assert.deepEqual((await sql`SELECT holder FROM leases`).map((r) => r.holder), ["h_new"]);
      assert.deepEqual((await sql`SELECT hash FROM dashboard_sessions`).map((r) => r.hash), ["s_new"]);
    } finally {
      await sql.end();
    }
  } finally {
    await store.close();
  }
});

pgTest(
  "a commit records its batch id; the sweep forgets ids a day old, by the index on their age",
  async (s) => {
    const store = await PgStore.open(s.url);
    const sql = connect(s.url, "test", { max: 1 });
    try {
      await store.createKey(keyRecord("key_a"));
      const batch = { id: batchId(), money: [{ keyId: "key_a", spent: 0n, credited: 5n }], usage: [] };
      const before = Date.now();
      await store.commit(batch);
      const [row] = await sql`SELECT id, committed_at FROM commit_batches`;
      assert.equal(row!.id, batch.id);
      await store.sweep(before + BATCH_ID_TTL_MS - 1); // not a day old yet: remembered
      await store.commit(batch);
      assert.equal((await store.getKey("key_a"))?.credited, 5n);
      await store.sweep(Number(row!.committed_at) + BATCH_ID_TTL_MS);
      assert.equal((await sql`SELECT id FROM commit_batches`).length, 0);
      await store.commit(batch); // forgotten: a batch that old is never retried
      assert.equal((await store.getKey("key_a"))?.credited, 10n);
      await sql`SET enable_seqscan = off`;
      const plan = (await sql`EXPLAIN DELETE FROM commit_batches WHERE committed_at <= ${"5"}`)
        .map((r) => r["QUERY PLAN"]).join("\n");
      assert.match(plan, /commit_batches_age/);
    } finally {
      await sql.end();
      await store.close();
    }
  },
);

pgTest(
  "watchDocument: each schema's document has its own channel; another schema's change is not heard",
  async (s) => {
    const other = await freshSchema();
    const [mine, theirs] = await Promise.all([PgStore.open(s.url), PgStore.open(other.url)]);
    let calls = 0;
    const stop = mine.watchDocument("d", () => calls++);
    try {
      await new Promise((r) => setTimeout(r, 500)); // listening (its start may call once)
      calls = 0;
      await theirs.updateDocument("d", () => ({ doc: { n: 1 }, result: null }));
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(calls, 0);
      await mine.updateDocument("d", () => ({ doc: { n: 1 }, result: null }));
      const changed = Date.now();
      while (calls === 0 && Date.now() - changed < 2_000) await new Promise((r) => setTimeout(r, 10));
      assert.equal(calls, 1);
    } finally {
      stop();
      await Promise.all([mine.close(), theirs.close()]);
      await other.drop();
    }
  },
);
