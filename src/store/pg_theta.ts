/**
 * The theta capabilities on Postgres (store.ts updateThetaPool, watchThetaPool, countRequest): the pool
 * document in the one row of `theta_pool`, changed under its row lock, each change announced by NOTIFY on a
 * channel of the store's own schema; request counts in `request_counts`, one row per (key, counter), counted
 * under its row lock (migration 3, pg_migrations.ts).
 */
import type { Sql } from "./pg_connect.ts";
import { STORE_LOCK_ID } from "./pg_connect.ts";
import { type CountLimits, countOneMore, type CountVerdict, encodeThetaPool } from "./theta_rules.ts";
import type { ThetaPoolDoc } from "./types.ts";
import type { Logger } from "../util/log.ts";

/** The NOTIFY channel of the store's pool: one per schema (channels are per database, and stores of
 *  several schemas may share one), named after the schema as the migration lock is (pg_connect.ts). */
export async function thetaChannel(sql: Sql): Promise<string> {
  const [row] = await sql.unsafe(`SELECT ${STORE_LOCK_ID} AS id`);
  return `theta_pool_${((row!.id as number) >>> 0).toString(16)}`;
}

/** One transaction: the row locked, `change` run (a throw rolls back), the document written and the change
 *  announced — listeners hear it at the commit, never before. Migration 3 created the row. */
export function updateThetaPool<T>(
  sql: Sql,
  channel: string,
  change: (doc: ThetaPoolDoc | null) => { doc: ThetaPoolDoc | null; result: T },
): Promise<T> {
  return sql.begin(async (tx) => {
    const [row] = await tx`SELECT doc FROM theta_pool FOR UPDATE`;
    if (!row) throw new Error("theta_pool has no row (migration 3 creates it)");
    const { doc, result } = change(row.doc as ThetaPoolDoc | null);
    if (doc !== null) {
      await tx`
        WITH saved AS (UPDATE theta_pool SET doc = convert_from(${encodeThetaPool(doc)}, 'UTF8')::jsonb)
        SELECT pg_notify(${channel}, '')`;
    }
    return result;
  }) as Promise<T>;
}

/**
 * LISTEN on the client's own connection for notifications (postgres.js keeps it and listens again after a
 * reconnect). `onChange` is also called each time the listen is (re)established: a change made while no
 * connection listened is then not missed.
 */
export function watchThetaPool(sql: Sql, channel: string, onChange: () => void, log: Logger): () => void {
  let stopped = false;
  const listening = sql.listen(channel, () => {
    if (!stopped) onChange();
  }, () => {
    if (!stopped) onChange();
  });
  listening.catch((err) =>
    log.error("postgres theta pool LISTEN failed", {
      error: err instanceof Error ? err.message : String(err),
    })
  );
  return () => {
    if (stopped) return;
    stopped = true;
    listening.then((l) => l.unlisten()).catch(() => {}); // failed above, or the store is closed
  };
}

/** One short transaction: the row created or locked (a no-op upsert returns it locked), the rule of
 *  theta_rules.ts applied, the row written when the request counts. */
export function countRequest(
  sql: Sql,
  keyId: string,
  counter: string,
  now: number,
  limits: CountLimits,
): Promise<CountVerdict> {
  return sql.begin(async (tx) => {
    const [row] = await tx`
      INSERT INTO request_counts (key_id, counter, hour_start, hour_count, day_start, day_count)
      VALUES (${keyId}, ${counter}, 0, 0, 0, 0)
      ON CONFLICT (key_id, counter) DO UPDATE SET key_id = EXCLUDED.key_id
      RETURNING hour_start, hour_count, day_start, day_count`;
    const prev = {
      hourStart: Number(row!.hour_start),
      hour: row!.hour_count as number,
      dayStart: Number(row!.day_start),
      day: row!.day_count as number,
    };
    const { verdict, next } = countOneMore(prev, now, limits);
    if (next !== null) {
      await tx`
        UPDATE request_counts SET hour_start = ${next.hourStart}, hour_count = ${next.hour},
          day_start = ${next.dayStart}, day_count = ${next.day}
        WHERE key_id = ${keyId} AND counter = ${counter}`;
    }
    return verdict;
  }) as Promise<CountVerdict>;
}
