/**
 * Connecting to the Postgres store: the client options, the advisory lock keys and the single-writer lock of
 * the serving process (its name for operators: pg_url.ts).
 */
import { describeDatabase } from "./pg_url.ts";
import postgres from "postgres";
import { DatabaseInUseError } from "./in_use.ts";

export type Sql = postgres.Sql;

/**
 * Advisory lock keys (two-int form, first int = this namespace; locks are per database): the single-writer
 * lock and the migration lock take the store's schema as the second int, a file upload the key's hash.
 */
export const LOCKS = { writer: 0x4757_0001, migrate: 0x4757_0002, fileQuota: 0x4757_0003 } as const;
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

/** Runs `fn`; a failure to reach the database becomes an error naming it (the client's own message kept). */
export async function naming<T>(url: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof DatabaseInUseError) throw err;
    throw new Error(`DATABASE_URL ${describeDatabase(url)}: ${err instanceof Error ? err.message : err}`, {
      cause: err,
    });
  }
}

/**
 * The serving process is the single writer of its store (README "Postgres"): a session-level advisory lock on
 * a connection of its own, held for the process's life. The second process is refused at once; the server
 * drops the lock when the holder's connection ends, so a kill -9 leaves no stale lock. Returns the release.
 */
export function lockStore(url: string): Promise<() => Promise<void>> {
  return naming(url, async () => {
    let releasing = false;
    // One connection that never recycles itself (the default max_lifetime would drop the lock after 30-60 min).
    const sql = connect(url, "gateway single-writer lock", {
      max: 1,
      max_lifetime: 0,
      idle_timeout: 0,
      onclose: () => {
        if (!releasing) {
          console.error(`single-writer lock on ${describeDatabase(url)} lost: connection closed`);
        }
      },
    });
    try {
      const [row] = await sql.unsafe<{ ok: boolean }[]>(
        `SELECT pg_try_advisory_lock($1, ${STORE_LOCK_ID}) AS ok`,
        [LOCKS.writer],
      );
      if (!row?.ok) throw new DatabaseInUseError(describeDatabase(url));
    } catch (err) {
      releasing = true;
      await sql.end({ timeout: 1 });
      throw err;
    }
    return async () => {
      releasing = true;
      await sql.end({ timeout: 5 });
    };
  });
}
