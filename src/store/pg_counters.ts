/**
 * Request counters on Postgres (store.ts WindowCounters): `request_counts`, one row per (key, counter),
 * counted under its row lock (migration 3, pg_migrations.ts).
 */
import type { Sql } from "./pg_connect.ts";
import { type CountLimits, countOneMore, type CountVerdict } from "./window_count.ts";
import type { WindowCounters } from "./store.ts";

export class PgCounters implements WindowCounters {
  constructor(private readonly sql: Sql) {}

  /** One short transaction: the row created or locked (a no-op upsert returns it locked), the rule of
   *  window_count.ts applied, the row written when the request counts. */
  countRequest(
    keyId: string,
    counter: string,
    now: number,
    limits: CountLimits,
  ): Promise<CountVerdict> {
    return this.sql.begin(async (tx) => {
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
}
