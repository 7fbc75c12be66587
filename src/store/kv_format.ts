/**
 * The Deno KV store's format (format.ts): its version in one record (kvKeys.storeFormat, `{ version }`), and
 * the steps from one version to the next as data, as Postgres's migrations are (pg_migrations.ts). A step
 * is never edited once released: a change is a new version.
 */
import { commitChecked, optimistic } from "./kv_atomic.ts";
import { kvKeys } from "./kv_keys.ts";
import { backfillUsageHours } from "./kv_usage_hours.ts";
import { checkFormat } from "./format.ts";

/**
 * One step of the format. `run` may run again (a process that dies before the version is recorded, processes
 * on a shared KV opening it at once), so it must be idempotent: it checks what it finds, as the backfill
 * checks its marker.
 */
export interface KvMigration {
  version: number;
  name: string;
  run(kv: Deno.Kv): Promise<void>;
}

/** The format's record. */
export interface StoreFormat {
  version: number;
}

export const KV_MIGRATIONS: readonly KvMigration[] = [
  {
    // A file written before the format record is this format but for its hourly sums, which count its rows
    // only once this step has run (its marker, kvKeys.usageHoursReady, says so). Key records of the older shape
    // (money inside the record) stay readable and are rewritten when read (kv_key_migration.ts).
    version: 1,
    name: "usage per hour, family and model, counted from the rows written before",
    run: backfillUsageHours,
  },
  {
    // Usage rows several to an entry (kv_usage_entries.ts). The rows written one to an entry stay as they are:
    // this build reads both. Nothing to move; the version keeps a build that reads only the old entries
    // from opening the store.
    version: 2,
    name: "usage rows several to an entry",
    run: () => Promise.resolve(),
  },
  {
    // Usage rows as arrays of their values (kv_usage_row.ts): less than half the bytes. The entries written
    // before stay as they are: this build reads them too. Nothing to move; the version keeps a build that reads
    // only rows as objects from opening the store.
    version: 3,
    name: "usage rows as arrays of their values",
    run: () => Promise.resolve(),
  },
  {
    // A usage entry's rows packed into bytes (kv_usage_pack.ts): a row is a few dozen bytes. The entries
    // written before stay as they are: this build reads them too. Nothing to move; the version keeps a build
    // that reads only rows as arrays or objects from opening the store.
    version: 4,
    name: "usage rows packed into bytes",
    run: () => Promise.resolve(),
  },
];

/**
 * Brings the store in `kv` to the newest version of `migrations`, before anything else reads or writes it
 * (KvStore.open). A store that records a version `migrations` does not hold is refused (StoreFormatError,
 * `store` names it) with nothing written. An empty store gets the newest version at once. A store with no
 * record was written before it (version 0): every step runs, each one's version recorded after it under a check
 * of the record, so two processes opening it at once agree (a step they both ran is idempotent). Returns the
 * versions stepped through now.
 */
export async function migrateKv(
  kv: Deno.Kv,
  store: string,
  migrations: readonly KvMigration[] = KV_MIGRATIONS,
): Promise<number[]> {
  const known = migrations.map((m) => m.version);
  const newest = Math.max(0, ...known);
  const read = async () => {
    const e = await kv.get<StoreFormat>(kvKeys.storeFormat());
    checkFormat(store, e.value ? [e.value.version] : [], known);
    return e;
  };
  let record = await read();
  if (record.value === null && await isEmpty(kv)) {
    const created = await commitChecked(
      kv.atomic().check(record).set(kvKeys.storeFormat(), { version: newest } satisfies StoreFormat),
    );
    if (created) return [];
    record = await read(); // another process wrote it first
  }
  const applied: number[] = [];
  for (const m of migrations) {
    if (m.version <= (record.value?.version ?? 0)) continue;
    await m.run(kv);
    let seen = record;
    record = await optimistic("store format", async () => {
      const op = kv.atomic().check(seen).set(
        kvKeys.storeFormat(),
        { version: m.version } satisfies StoreFormat,
      );
      if (await commitChecked(op)) return { value: await read() };
      // Lost: another process recorded this step (or a later one: go on from there), or a shared file was
      // locked (again).
      seen = await read();
      return (seen.value?.version ?? 0) >= m.version ? { value: seen } : null;
    });
    applied.push(m.version);
  }
  return applied;
}

async function isEmpty(kv: Deno.Kv): Promise<boolean> {
  for await (const _ of kv.list({ prefix: [] }, { limit: 1 })) return false;
  return true;
}
