/**
 * The Store contract on Postgres (a fresh schema per test), and what only the Postgres store promises:
 * migrations applied once under concurrency, the single-writer lock, one atomic statement per commit, the
 * report's index, the sweep. Needs TEST_DATABASE_URL (CI sets it); without it these are ignored.
 */
import assert from "node:assert/strict";
import { parseConfig } from "../config/env.ts";
import { DatabaseInUseError } from "./in_use.ts";
import { openStore } from "./open.ts";
import { connect } from "./pg_connect.ts";
import { migrate, MIGRATIONS } from "./pg_migrations.ts";
import { PgStore } from "./pg_store.ts";
import { freshSchema, PG_SKIP_NOTE, TEST_DATABASE_URL, type TestSchema } from "./pg_test_schema.ts";
import { leaseContract } from "./lease_contract.ts";
import { type StoreBackend, storeContract } from "./store_contract.ts";
import { keyRecord, usageRow } from "./test_fixtures.ts";

const postgres: StoreBackend = {
  name: "postgres",
  ...(TEST_DATABASE_URL ? {} : { skip: "TEST_DATABASE_URL unset" }),
  async fresh() {
    const schema = await freshSchema();
    return { open: () => PgStore.open(schema.url), remove: schema.drop };
  },
};
storeContract(postgres);
leaseContract(postgres);

/** A Postgres-only test on a fresh schema, dropped at the end. */
function pgTest(name: string, fn: (schema: TestSchema) => Promise<void>) {
  Deno.test({
    name: `postgres store: ${name}${PG_SKIP_NOTE}`,
    ignore: !TEST_DATABASE_URL,
    async fn() {
      const schema = await freshSchema();
      try {
        await fn(schema);
      } finally {
        await schema.drop();
      }
    },
  });
}

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
  "single writer: a second open of the same store is refused, naming the database without its password",
  async (s) => {
    const config = parseConfig({ DATABASE_URL: s.url });
    const first = await openStore(config);
    try {
      let err: unknown;
      try {
        await (await openStore(config)).close(); // must not get here
      } catch (e) {
        err = e;
      }
      assert.ok(err instanceof DatabaseInUseError, String(err));
      const url = new URL(s.url);
      assert.ok(err.message.includes(`${url.host}${url.pathname}`), err.message);
      assert.ok(err.message.includes(`schema ${s.name}`), err.message);
      if (url.password) assert.ok(!err.message.includes(url.password), "the password is never shown");
      // Another schema is another store.
      const other = await freshSchema();
      try {
        await (await openStore(parseConfig({ DATABASE_URL: other.url }))).close();
      } finally {
        await other.drop();
      }
    } finally {
      await first.close();
    }
    // Closing released the lock.
    await (await openStore(config)).close();
  },
);

pgTest("commit is one statement: a batch that fails moves no money and deletes no checkpoint", async (s) => {
  const store = await PgStore.open(s.url);
  try {
    await store.createKey(keyRecord("key_a", { balance: 100n, credited: 100n }));
    await store.commit({ money: [], usage: [], open: [usageRow("req_a", "key_a")] });
    const tooBig = usageRow("req_b", "key_a", { charged: 10n ** 41n }); // beyond numeric(40,0)
    await assert.rejects(
      store.commit({
        money: [{ keyId: "key_a", spent: 10n, credited: 0n }],
        usage: [usageRow("req_a", "key_a"), tooBig],
        closed: ["req_a"],
      }),
      /numeric field overflow/,
    );
    assert.equal((await store.getKey("key_a"))!.balance, 100n);
    assert.deepEqual((await store.listOpen()).map((r) => r.requestId), ["req_a"]);
    assert.deepEqual((await store.listUsage("key_a", { limit: 5 })).rows, []);
    await assert.rejects(
      store.commit({ money: [{ keyId: "key_a", spent: -1n, credited: 0n }], usage: [] }),
      RangeError,
    );
  } finally {
    await store.close();
  }
});

pgTest("the usage report's page is an index range in the report's order (no sort)", async (s) => {
  const store = await PgStore.open(s.url);
  const sql = connect(s.url, "test", { max: 1 });
  try {
    await store.commit({ money: [], usage: [usageRow("req_a", "key_a")] });
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

pgTest("the sweep deletes every expired file and tool loop, and nothing live", async (s) => {
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
    const loop = (id: string, expiresAt: number) => ({
      keyId: "k1",
      id,
      callIds: ["c"],
      updatedAt: 0,
      expiresAt,
    });
    await store.updateToolLoops("k1", { close: [], open: loop("l_old", 100) });
    await store.updateToolLoops("k1", { close: [], open: loop("l_new", 1_000) });
    await store.sweep(500);
    const sql = connect(s.url, "test");
    try {
      assert.deepEqual(
        (await sql`SELECT key_id, id FROM files ORDER BY key_id, id`).map((r) => `${r.key_id}/${r.id}`),
        [
          "k1/f_new",
        ],
      );
      assert.deepEqual((await sql`SELECT id FROM tool_loops`).map((r) => r.id), ["l_new"]);
    } finally {
      await sql.end();
    }
  } finally {
    await store.close();
  }
});
