/** Usage rows and their hourly sums on Postgres (store.ts UsageStore): `usage_rows` and `usage_hours`, each
 *  read as one index range. */
import type { UsagePage, UsageStore } from "./store.ts";
import type { UsageHour, UsageRow } from "./types.ts";
import type { Sql } from "./pg_connect.ts";
import { usageFromRow, usageHourFromRow } from "./pg_rows.ts";
import { checkHourRange } from "./usage_hours.ts";

/** The largest created_at: a first page starts "after" it. */
const NEWEST = { createdAt: "9223372036854775807", requestId: "" };

export class PgUsage implements UsageStore {
  constructor(private readonly sql: Sql) {}

  async listUsage(keyId: string, opts: { limit: number; after?: string }): Promise<UsagePage> {
    const from = opts.after === undefined ? NEWEST : parseCursor(opts.after);
    // Served by usage_rows_report (key_id, created_at DESC, request_id): an index range, stopped at the limit.
    const found = await this.sql`
      SELECT * FROM usage_rows
      WHERE key_id = ${keyId} AND created_at <= ${from.createdAt}
        AND (created_at < ${from.createdAt} OR request_id > ${from.requestId})
      ORDER BY created_at DESC, request_id
      LIMIT ${opts.limit}`;
    const rows = found.map(usageFromRow);
    const cursors = rows.map(cursorOf);
    return rows.length === opts.limit && rows.length > 0
      ? { rows, cursors, next: cursors[cursors.length - 1]! }
      : { rows, cursors };
  }

  /** Served by usage_hours' primary key (key_id, hour, family, model): an index range, in its order. */
  async usageHours(keyId: string, fromMs: number, toMs: number): Promise<UsageHour[]> {
    checkHourRange(fromMs, toMs);
    const rows = await this.sql.unsafe(
      `SELECT * FROM usage_hours WHERE key_id = $1 AND hour >= $2 AND hour < $3 ORDER BY hour, family, model`,
      [keyId, fromMs, toMs],
      { prepare: true },
    );
    return rows.map(usageHourFromRow);
  }
}

/** A position just past a row: its time and request id (opaque to callers; the report signs it). */
function cursorOf(row: UsageRow): string {
  return `${row.createdAt}:${row.requestId}`;
}

function parseCursor(cursor: string): { createdAt: string; requestId: string } {
  const m = /^(\d{1,19}):(.*)$/s.exec(cursor);
  if (!m) throw new Error("invalid usage cursor");
  return { createdAt: m[1]!, requestId: m[2]! };
}
