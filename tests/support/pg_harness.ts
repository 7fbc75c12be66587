/**
 * Gateway tests on the Postgres store: each runs in a fresh schema of TEST_DATABASE_URL, passed to the gateways
 * it starts as their DATABASE_URL (a restart = a second gateway on the same env). Unset, the test is ignored
 * and its name says so, so `deno task test` passes without Postgres; CI sets it (.ci/run).
 */
import {
  freshSchema,
  PG_SKIP_NOTE,
  TEST_DATABASE_URL,
  type TestSchema,
} from "../../src/store/testing/pg_test_schema.ts";

export function pgGatewayTest(
  name: string,
  fn: (env: { DATABASE_URL: string }, schema: TestSchema) => Promise<void>,
): void {
  Deno.test({
    name: `${name} [postgres]${PG_SKIP_NOTE}`,
    ignore: !TEST_DATABASE_URL,
    async fn() {
      const schema = await freshSchema();
      try {
        await fn({ DATABASE_URL: schema.url }, schema);
      } finally {
        await schema.drop();
      }
    },
  });
}
