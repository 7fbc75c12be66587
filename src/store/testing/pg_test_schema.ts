/**
 * Postgres for tests: `TEST_DATABASE_URL` names a database the tests may write (CI starts one, .ci/run);
 * unset, every Postgres test is registered with `ignore: true` and says why in its name. Each test gets a
 * fresh schema (its store lives there through `?search_path=`), dropped at the end.
 */
import postgres from "postgres";

export const TEST_DATABASE_URL = Deno.env.get("TEST_DATABASE_URL") || undefined;

/** The suffix of a Postgres test's name when it cannot run here. */
export const PG_SKIP_NOTE = TEST_DATABASE_URL ? "" : " [skipped: TEST_DATABASE_URL unset]";

export interface TestSchema {
  /** A DATABASE_URL whose store lives in the fresh schema. */
  url: string;
  name: string;
  drop(): Promise<void>;
}

async function admin(base: string, fn: (sql: postgres.Sql) => Promise<unknown>): Promise<void> {
  const sql = postgres(base, { max: 1, onnotice: () => {} });
  try {
    await fn(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** A fresh schema of the database `base` (TEST_DATABASE_URL unless given: the bench passes its own). */
export async function freshSchema(base = TEST_DATABASE_URL): Promise<TestSchema> {
  if (!base) throw new Error("TEST_DATABASE_URL is not set");
  const name = `test_${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;
  await admin(base, (sql) => sql.unsafe(`CREATE SCHEMA ${name}`));
  const url = new URL(base);
  url.searchParams.set("search_path", name);
  return {
    url: url.toString(),
    name,
    drop: () => admin(base, (sql) => sql.unsafe(`DROP SCHEMA ${name} CASCADE`)),
  };
}

/** A Postgres-only test on a fresh schema, dropped at the end. */
export function pgTest(name: string, fn: (schema: TestSchema) => Promise<void>): void {
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
