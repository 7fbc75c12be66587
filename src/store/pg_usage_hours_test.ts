/**
 * What only the Postgres store promises about the hourly sums: migration 6 counts the rows written before it,
 * and a key's hours are read as a range of usage_hours' primary key. Needs TEST_DATABASE_URL.
 */
import assert from "node:assert/strict";
import { connect } from "./pg_connect.ts";
import { migrate, MIGRATIONS } from "./pg_migrations.ts";
import { columnArrays, unnestOf, USAGE_COLUMNS } from "./pg_rows.ts";
import { PgStore } from "./pg_store.ts";
import { pgTest } from "./testing/pg_test_schema.ts";
import { batchId, usageRow } from "./testing/test_fixtures.ts";
import { expectedHours } from "./testing/usage_hours_contract.ts";

const HOUR = 3_600_000;
const H = Date.UTC(2026, 2, 1, 10);

pgTest("migration 6 sums the usage rows written before it, once", async ({ url }) => {
  const rows = Array.from({ length: 30 }, (_, i) =>
    usageRow(`req_${i}`, i % 4 === 0 ? "key_b" : "key_a", {
      createdAt: H + (i % 3) * HOUR + i,
      model: i % 2 === 0 ? "k3" : "k4",
      inputTokens: i,
      cachedInputTokens: i % 5,
      outputTokens: 2 * i,
      charged: (1n << 70n) + BigInt(i),
    }));
  const sql = connect(url, "test", { max: 1 });
  try {
    // A database of version 5 with rows (served_model, the last usage column, came with version 4).
    await migrate(sql, MIGRATIONS.filter((m) => m.version <= 5));
    const names = USAGE_COLUMNS.map(([name]) => name).join(", ");
    await sql.unsafe(
      `INSERT INTO usage_rows (${names}) SELECT * FROM ${unnestOf(USAGE_COLUMNS, 1)}`,
      columnArrays(USAGE_COLUMNS, rows),
    );
  } finally {
    await sql.end();
  }
  const store = await PgStore.open(url);
  const fresh = usageRow("req_new", "key_a", { createdAt: H + 1, charged: 5n });
  try {
    const all: [number, number] = [H - HOUR, H + 5 * HOUR];
    for (const k of ["key_a", "key_b"]) {
      assert.deepEqual(
        await store.usageHours(k, ...all),
        expectedHours(rows.filter((u) => u.keyId === k), ...all),
      );
    }
    await store.commit({ id: batchId(), money: [], usage: [fresh] });
    const again = await PgStore.open(url); // nothing left to migrate: nothing counted twice
    try {
      const want = expectedHours([...rows.filter((u) => u.keyId === "key_a"), fresh], ...all);
      assert.deepEqual(await again.usageHours("key_a", ...all), want);
    } finally {
      await again.close();
    }
  } finally {
    await store.close();
  }
});

pgTest(
  "a key's hours are an index range of usage_hours in the contract's order (no sort, no scan)",
  async ({ url }) => {
    const store = await PgStore.open(url);
    const sql = connect(url, "test", { max: 1 });
    try {
      await store.commit({ id: batchId(), money: [], usage: [usageRow("req_a", "key_a", { createdAt: H })] });
      await sql`SET enable_seqscan = off`;
      const plan = (await sql`
      EXPLAIN SELECT * FROM usage_hours WHERE key_id = ${"key_a"} AND hour >= ${H} AND hour < ${H + HOUR}
      ORDER BY hour, family, model`).map((r) => r["QUERY PLAN"]).join("\n");
      assert.match(plan, /Index Scan using usage_hours_pkey/);
      assert.doesNotMatch(plan, /Sort/);
    } finally {
      await sql.end();
      await store.close();
    }
  },
);
