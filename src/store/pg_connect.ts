/** Connecting to the Postgres store: the client options and the advisory lock keys (its name for operators:
 *  pg_url.ts). */
import { StoreFormatError } from "./format.ts";
import { describeDatabase } from "./pg_url.ts";
import postgres from "postgres";

export type Sql = postgres.Sql;

/**
 * Advisory lock keys (two-int form, first int = this namespace; locks are per database): the migration lock
 * takes the store's schema as the second int, a file upload the key's hash. (0x4757_0001 was the single-writer
 * lock of the stores before credit leases: not reused.)
 */
export const LOCKS = { migrate: 0x4757_0002, fileQuota: 0x4757_0003 } as const;
/** SQL for the second int of a per-store lock: the schema the store's tables live in. */
export const STORE_LOCK_ID = "hashtext(coalesce(current_schema(), current_setting('search_path')))";

/** A client of the store's database; `name` shows in pg_stat_activity. */
export function connect(url: string, name: string, opts: postgres.Options<Record<string, never>> = {}): Sql {
  return postgres(url, {
    onnotice: () => {}, // "relation already exists, skipping" from idempotent migrations
    connection: { application_name: name },
    ...opts,
  });
}

/** Runs `fn`; a failure to reach the database becomes an error naming it (the client's own message kept). A
 *  refused format names the store already and goes through as it is, for main.ts and the admin CLI to report. */
export async function naming<T>(url: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof StoreFormatError) throw err;
    throw new Error(`DATABASE_URL ${describeDatabase(url)}: ${err instanceof Error ? err.message : err}`, {
      cause: err,
    });
  }
}
