/**
 * The seeded model test of the leasing ledger (testing/lease_model.ts, docs/ledger_leases.md): several simulated
 * processes on one real store — Deno KV in memory, and Postgres when TEST_DATABASE_URL is set — driven by a
 * seeded random sequence of holds, settlements, top-ups, caps, clock moves, kills and restarts, with the money
 * and cap invariants checked after every step and a liveness rule for holds that must be admitted.
 * LEASE_MODEL_SEED replays one seed (LEASE_MODEL_STEPS sets its length); a failure prints its seed, step and
 * last operations.
 */
import { KvStore } from "../store/kv_store.ts";
import { PgStore } from "../store/pg_store.ts";
import { freshSchema, PG_SKIP_NOTE, TEST_DATABASE_URL } from "../store/testing/pg_test_schema.ts";
import type { Store } from "../store/store.ts";
import { LeaseModel } from "./testing/lease_model.ts";

const SEED = Deno.env.get("LEASE_MODEL_SEED");
const STEPS = Deno.env.get("LEASE_MODEL_STEPS");

/** The seeds of the default suite, or the one to replay. */
function seeds(fixed: number[]): number[] {
  return SEED === undefined ? fixed : [Number(SEED)];
}

async function runSeeds(
  label: string,
  fixed: number[],
  steps: number,
  open: () => Promise<{ store: Store; close: () => Promise<void> }>,
): Promise<void> {
  const totals: Record<string, number> = {};
  for (const seed of seeds(fixed)) {
    const { store, close } = await open();
    try {
      const r = await new LeaseModel({ seed, steps: STEPS ? Number(STEPS) : steps, store, label }).run();
      const { codes, ...counts } = r;
      for (const [k, n] of Object.entries({ ...counts, ...codes })) totals[k] = (totals[k] ?? 0) + n;
    } finally {
      await close();
    }
  }
  console.log(`lease model [${label}]: ${JSON.stringify(totals)}`);
}

Deno.test("lease model: several processes on one in-memory Deno KV keep the money and cap invariants", async () => {
  await runSeeds("kv", [1, 2, 3, 4, 5], 1_300, async () => {
    const store = await KvStore.open(":memory:");
    return { store, close: () => store.close() };
  });
});

Deno.test({
  name: `lease model: several processes on one Postgres keep the money and cap invariants${PG_SKIP_NOTE}`,
  ignore: !TEST_DATABASE_URL,
  async fn() {
    await runSeeds("postgres", [1, 101, 102], 600, async () => {
      const schema = await freshSchema();
      const store = await PgStore.open(schema.url);
      return {
        store,
        close: async () => {
          await store.close();
          await schema.drop();
        },
      };
    });
  },
});
