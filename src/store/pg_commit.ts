/**
 * The group commit on Postgres (store.ts commit): a batch is one statement (COMMIT_SQL), its rows sent
 * column-wise (pg_rows.ts).
 */
import type { Sql } from "./pg_connect.ts";
import { columnArrays, MONEY_COLUMNS, unnestOf, USAGE_COLUMNS } from "./pg_rows.ts";
import { emptyWindow, HOUR } from "./shared_window.ts";
import { checkBatchId } from "./batch_id.ts";
import type { CommitBatch } from "./types.ts";

const USAGE_NAMES = USAGE_COLUMNS.map(([name]) => name).join(", ");
const USAGE_UPDATE = USAGE_COLUMNS.map(([name]) => `${name} = EXCLUDED.${name}`).join(", ");

/** usage_hours' columns (pg_migrations.ts version 6), and the sums an upsert adds to. */
const HOUR_NAMES =
  "key_id, hour, family, model, requests, charged, input_tokens, cached_input_tokens, output_tokens";
const HOUR_SUMS = ["requests", "charged", "input_tokens", "cached_input_tokens", "output_tokens"]
  .map((c) => `${c} = usage_hours.${c} + EXCLUDED.${c}`).join(", ");

/** Window columns after a commit at `at`: rolled as shared_window.ts rollWindow does (a window that started
 *  before the current one restarts at zero; a later-stamped one is kept), then `add` added; untouched for a
 *  key none of whose deltas carries a lease. `start` is the parameter of the current window's start. */
function rolledWindow(unit: "hour" | "day", start: string, add: { spent: string; reserved: string }): string {
  const stale = `keys.${unit}_start < ${start}`;
  const sum = (col: "spent" | "reserved") =>
    `${unit}_${col} = CASE WHEN NOT delta.leased THEN keys.${unit}_${col} ` +
    `WHEN ${stale} THEN ${add[col]} ELSE keys.${unit}_${col} + ${add[col]} END`;
  return `${unit}_start = CASE WHEN delta.leased AND ${stale} THEN ${start} ELSE keys.${unit}_start END,
    ${sum("spent")},
    ${sum("reserved")}`;
}

/** The parameters after the money columns: the starts of the hour and the day at the batch's `at`
 *  (shared_window.ts emptyWindow), the closed ids, the usage and checkpoint columns, then the batch's id and
 *  the time it is committed at (Unix ms). */
const HOUR_START = MONEY_COLUMNS.length + 1;
const CLOSED = HOUR_START + 2;
const BATCH = CLOSED + 1 + 2 * USAGE_COLUMNS.length;
/** In a source of every write below: none writes when the batch's id was committed before. */
const FIRST_TIME = "EXISTS (SELECT FROM batch)";
const WINDOW_ADD = { spent: "delta.window_spent", reserved: "delta.window_reserved" };

/**
 * The whole group commit as one statement (so one round trip and one transaction): the batch's id recorded
 * (table commit_batches; nothing else is written when it is there already: a retry after a lost reply,
 * batch_id.ts), money deltas summed per
 * key and added to the counters (and, for lease deltas, to the windows rolled to `at`), the holders'
 * leases shrunk, settled checkpoints deleted, usage rows and fresh checkpoints upserted, and the rows summed
 * per (key, hour, family, model) added to usage_hours (one upsert per hour: a batch never names one twice).
 * Several processes commit and take at once, so rows are locked in one order: the keys by id (`locked`, before
 * any key is updated), then, once every key is updated, the leases by (key, holder) — a take locks its key
 * first too — and, once the leases are locked, the hours in key order.
 * Parameters: the money columns (MONEY_COLUMNS), then those of HOUR_START.
 */
const COMMIT_SQL = `
WITH batch AS (
  INSERT INTO commit_batches (id, committed_at) VALUES ($${BATCH}::text, $${BATCH + 1}::int8)
  ON CONFLICT (id) DO NOTHING RETURNING id
), d AS (
  SELECT * FROM ${unnestOf(MONEY_COLUMNS, 1)} AS d(${MONEY_COLUMNS.map(([name]) => name).join(", ")})
  WHERE ${FIRST_TIME}
), delta AS (
  SELECT key_id, sum(spent) AS spent, sum(credited) AS credited, bool_or(holder IS NOT NULL) AS leased,
    coalesce(sum(spent) FILTER (WHERE holder IS NOT NULL), 0) AS window_spent,
    coalesce(sum(reserved) FILTER (WHERE holder IS NOT NULL), 0) AS window_reserved
  FROM d GROUP BY key_id
), locked AS (
  SELECT id FROM keys WHERE id IN (SELECT key_id FROM delta) ORDER BY id FOR UPDATE
), money AS (
  UPDATE keys SET spent = keys.spent + delta.spent, credited = keys.credited + delta.credited,
    ${rolledWindow("hour", `$${HOUR_START}::int8`, WINDOW_ADD)},
    ${rolledWindow("day", `$${HOUR_START + 1}::int8`, WINDOW_ADD)}
  FROM delta WHERE keys.id = delta.key_id AND (SELECT count(*) FROM locked) >= 0
  RETURNING keys.id
), lease_delta AS (
  SELECT key_id, holder, sum(spent + returned) AS shrink
  FROM d WHERE holder IS NOT NULL GROUP BY key_id, holder
), held AS (
  SELECT leases.key_id, leases.holder, leases.amount, lease_delta.shrink
  FROM leases JOIN lease_delta USING (key_id, holder)
  WHERE (SELECT count(*) FROM money) >= 0
  ORDER BY leases.key_id, leases.holder FOR UPDATE OF leases
), shrunk AS (
  UPDATE leases SET amount = held.amount - held.shrink FROM held
  WHERE leases.key_id = held.key_id AND leases.holder = held.holder AND held.amount > held.shrink
), emptied AS (
  DELETE FROM leases USING held
  WHERE leases.key_id = held.key_id AND leases.holder = held.holder AND held.amount <= held.shrink
), closed AS (
  DELETE FROM usage_checkpoints WHERE request_id = ANY($${CLOSED}::text[]) AND ${FIRST_TIME}
), new_rows AS (
  SELECT * FROM ${unnestOf(USAGE_COLUMNS, CLOSED + 1)} AS r(${USAGE_NAMES}) WHERE ${FIRST_TIME}
), usage AS (
  INSERT INTO usage_rows (${USAGE_NAMES}) SELECT * FROM new_rows
  ON CONFLICT (key_id, created_at, request_id) DO UPDATE SET ${USAGE_UPDATE}
), hours AS (
  INSERT INTO usage_hours (${HOUR_NAMES})
  SELECT key_id, created_at - created_at % ${HOUR}, family, model, count(*), sum(charged),
    sum(input_tokens), sum(cached_input_tokens), sum(output_tokens)
  FROM new_rows WHERE (SELECT count(*) FROM held) >= 0
  GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
  ON CONFLICT (key_id, hour, family, model) DO UPDATE SET ${HOUR_SUMS}
), open AS (
  INSERT INTO usage_checkpoints (${USAGE_NAMES}) SELECT * FROM ${
  unnestOf(USAGE_COLUMNS, CLOSED + 1 + USAGE_COLUMNS.length)
} WHERE ${FIRST_TIME}
  ON CONFLICT (request_id) DO UPDATE SET ${USAGE_UPDATE}
)
SELECT 1`;

export async function commitBatch(sql: Sql, batch: CommitBatch): Promise<void> {
  checkBatchId(batch.id);
  const usage = lastOf(batch.usage, (u) => `${u.keyId}\n${u.createdAt}\n${u.requestId}`);
  const open = lastOf(batch.open ?? [], (u) => u.requestId);
  // A request both settled and checkpointed in one batch keeps its checkpoint, as on KV (the later write).
  const reopened = new Set(open.map((u) => u.requestId));
  const closed = (batch.closed ?? []).filter((id) => !reopened.has(id));
  if (batch.money.length + closed.length + usage.length + open.length === 0) return;
  for (const d of batch.money) {
    if (d.spent < 0n || d.credited < 0n || d.lease && (d.lease.returned < 0n || d.lease.reserved < 0n)) {
      throw new RangeError(`money counter delta out of range: ${d.keyId}`);
    }
    if (d.lease && batch.at === undefined) {
      throw new RangeError(`lease delta without the batch's at: ${d.keyId}`);
    }
  }
  const at = batch.at === undefined ? undefined : emptyWindow(batch.at);
  await sql.unsafe(COMMIT_SQL, [
    ...columnArrays(MONEY_COLUMNS, batch.money),
    at?.hourStart ?? null,
    at?.dayStart ?? null,
    closed,
    ...columnArrays(USAGE_COLUMNS, usage),
    ...columnArrays(USAGE_COLUMNS, open),
    batch.id,
    Date.now(),
  ], { prepare: true });
}

/** The last item per key, in first-seen order (a batch upserts each row once). */
function lastOf<T>(items: readonly T[], keyOf: (item: T) => string): T[] {
  const byKey = new Map<string, T>();
  for (const item of items) byKey.set(keyOf(item), item);
  return byKey.size === items.length ? [...items] : [...byKey.values()];
}
