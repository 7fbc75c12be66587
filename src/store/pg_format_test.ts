/**
 * The Postgres store's format (format.ts): the highest version in `schema_migrations`. A newer build migrates
 * a store of this format on open; this build refuses a newer store under the migration lock, with nothing
 * applied. Needs TEST_DATABASE_URL (CI sets it); without it these are ignored.
 */
import assert from "node:assert/strict";
import { StoreFormatError } from "./format.ts";
import { connect } from "./pg_connect.ts";
import { type Migration, MIGRATIONS } from "./pg_migrations.ts";
import { PgStore } from "./pg_store.ts";
import { describeDatabase } from "./pg_url.ts";
import { assertSample, writeSample } from "./testing/format_fixtures.ts";
import { pgTest } from "./testing/pg_test_schema.ts";

const CURRENT = MIGRATIONS.at(-1)!.version;

/** This build's migrations and one more, as a newer build has: a table whose one row counts its runs. */
const NEWER: Migration[] = [...MIGRATIONS, {
  version: CURRENT + 1,
  name: "test step",
  sql: "CREATE TABLE test_step (runs integer NOT NULL); INSERT INTO test_step VALUES (1);",
}];

const openNewer = (url: string) => PgStore.open(url, undefined, undefined, undefined, NEWER);

async function withSql<T>(url: string, fn: (sql: ReturnType<typeof connect>) => Promise<T>): Promise<T> {
  const sql = connect(url, "test");
  try {
    return await fn(sql);
  } finally {
    await sql.end();
  }
}

const versions = (url: string) =>
  withSql(url, async (sql) =>
    (await sql<{ version: number; name: string; applied_at: Date }[]>`
      SELECT version, name, applied_at FROM schema_migrations ORDER BY version`).map((r) => ({ ...r })));

pgTest("format: a newer build migrates a store of this format once, the data intact", async (s) => {
  const store = await PgStore.open(s.url);
  try {
    await writeSample(store);
  } finally {
    await store.close();
  }
  for (let open = 0; open < 2; open++) {
    const migrated = await openNewer(s.url);
    try {
      await assertSample(migrated);
    } finally {
      await migrated.close();
    }
  }
  assert.deepEqual((await versions(s.url)).map((r) => r.version), NEWER.map((m) => m.version));
  const runs = await withSql(s.url, (sql) => sql`SELECT runs FROM test_step`);
  assert.deepEqual(runs.map((r) => r.runs), [1], "the step ran once");
});

pgTest("format: a store of a newer format is refused, with nothing applied", async (s) => {
  const store = await openNewer(s.url);
  try {
    await writeSample(store);
  } finally {
    await store.close();
  }
  const before = await versions(s.url);
  const err = await PgStore.open(s.url).then(
    (st) => st.close().then(() => assert.fail("opened a newer store")),
    (e: unknown) => e,
  );
  assert.ok(err instanceof StoreFormatError, String(err));
  assert.equal(
    err.message,
    `the Postgres store ${describeDatabase(s.url)} is format ${CURRENT + 1}, written by a newer gateway; ` +
      `this build reads formats up to ${CURRENT}. Run the newer gateway, or restore a backup into an empty ` +
      "store (docs/upgrades.md).",
  );
  assert.deepEqual(await versions(s.url), before, "schema_migrations unchanged");
  const reopened = await openNewer(s.url);
  try {
    await assertSample(reopened);
  } finally {
    await reopened.close();
  }
});

pgTest(
  "format: a store recording a version the build skips is refused before anything is applied",
  async (s) => {
    // A build that skips version CURRENT (another branch's), on a store at CURRENT - 1 plus that version.
    const skipping = [...MIGRATIONS.slice(0, -1), NEWER.at(-1)!];
    await (await PgStore.open(s.url, undefined, undefined, undefined, MIGRATIONS.slice(0, -1))).close();
    await withSql(
      s.url,
      (sql) => sql`INSERT INTO schema_migrations (version, name) VALUES (${CURRENT}, 'x')`,
    );
    const before = await versions(s.url);
    await assert.rejects(
      PgStore.open(s.url, undefined, undefined, undefined, skipping),
      (e: unknown) =>
        e instanceof StoreFormatError &&
        e.message.includes(`records format ${CURRENT}, which this build does not know`),
    );
    assert.deepEqual(await versions(s.url), before);
  },
);
