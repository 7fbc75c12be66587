/** What only the Postgres idempotency store promises: the sweep deletes expired records with their answers. */
import assert from "node:assert/strict";
import { connect } from "./pg_connect.ts";
import { PgStore } from "./pg_store.ts";
import { pgTest } from "./testing/pg_test_schema.ts";

const claim = (holder: string, now: number, ttlMs: number) => ({
  fingerprint: "f".repeat(64),
  holder,
  now,
  leaseMs: 1_000,
  ttlMs,
});

pgTest(
  "the sweep deletes every idempotency record expired at its now, running or done, and nothing live",
  async (s) => {
    const store = await PgStore.open(s.url);
    const sql = connect(s.url, "test");
    try {
      await store.claimIdempotency("key_a", "run_old", claim("h1", 0, 100));
      await store.claimIdempotency("key_a", "run_edge", claim("h1", 0, 500)); // expires at 500: expired at 500
      await store.claimIdempotency("key_a", "run_new", claim("h1", 0, 501));
      await store.claimIdempotency("key_b", "done_old", claim("h1", 0, 100_000));
      await store.claimIdempotency("key_b", "done_new", claim("h1", 0, 100));
      const answer = (expiresAt: number) => ({
        head: { status: 200, headers: [] as [string, string][], stream: true, bytes: 3 },
        body: new Uint8Array([1, 2, 3]),
        expiresAt,
      });
      assert.equal(await store.finishIdempotency("key_b", "done_old", "h1", answer(400)), true);
      assert.equal(await store.finishIdempotency("key_b", "done_new", "h1", answer(600)), true);
      await store.sweep(500);
      const left = await sql`SELECT key_id, idem_key FROM idempotency_keys ORDER BY key_id, idem_key`;
      assert.deepEqual(left.map((r) => `${r.key_id}/${r.idem_key}`), ["key_a/run_new", "key_b/done_new"]);
      await sql`SET enable_seqscan = off`;
      const plan = (await sql`EXPLAIN SELECT key_id FROM idempotency_keys WHERE expires_at <= ${"5"}`)
        .map((r) => r["QUERY PLAN"]).join("\n");
      assert.match(plan, /idempotency_keys_expiry/);
    } finally {
      await sql.end();
      await store.close();
    }
  },
);
