/**
 * The ledger on Postgres (store.ts LedgerStore): the group commit (pg_commit.ts), drain checkpoints and credit
 * leases (docs/ledger_leases.md). Every
 * writer of a key's leases — take, commit — locks the key's row first; a renewal and the sweep touch only
 * lease rows, in key order or without waiting, so no two of them deadlock (pg_commit.ts COMMIT_SQL locks in
 * the same order).
 */
import type postgres from "postgres";
import type { Sql } from "./pg_connect.ts";
import { checkDecision } from "./lease_decision.ts";
import { leaseViewFromRow, usageFromRow } from "./pg_rows.ts";
import { commitBatch } from "./pg_commit.ts";
import type { LedgerStore } from "./store.ts";
import { addToWindow } from "./shared_window.ts";
import type { Caps, CommitBatch, LeaseTake, LeaseView, UsageRow } from "./types.ts";

/** Attempts of a take that lost to a deadlock or a serialization failure (none is expected: see above). */
const TAKE_ATTEMPTS = 5;
const RETRIED_CODES = new Set(["40P01", "40001"]);

const WINDOW_COLUMNS = "hour_start, day_start, hour_spent, day_spent, hour_reserved, day_reserved";
const CAP_COLUMNS = "cap_hourly_spend, cap_daily_spend, cap_hourly_reserve, cap_daily_reserve";

const bigOrNull = (v: string | null): bigint | null => v === null ? null : BigInt(v);

/** The caps of a `keys` row read with CAP_COLUMNS. */
function capsFromRow(r: postgres.Row): Caps {
  return {
    hourlySpend: bigOrNull(r.cap_hourly_spend),
    dailySpend: bigOrNull(r.cap_daily_spend),
    hourlyReserve: bigOrNull(r.cap_hourly_reserve),
    dailyReserve: bigOrNull(r.cap_daily_reserve),
  };
}

async function takeOnce(
  tx: postgres.TransactionSql,
  take: LeaseTake,
): Promise<{ view: LeaseView; grant: bigint }> {
  const { keyId, holder, now } = take;
  // The lock comes first, in a statement of its own: in READ COMMITTED each later statement's snapshot is
  // taken once it is held, so the leases read below include every take and commit of the key before this one.
  // The caps come with it: a cap set (an UPDATE of the row) is ordered before or after this take as a whole.
  const [key] = await tx.unsafe(
    `SELECT credited, spent, ${WINDOW_COLUMNS}, ${CAP_COLUMNS} FROM keys WHERE id = $1 FOR UPDATE`,
    [keyId],
    { prepare: true }, // one text, so prepared once per connection: no describe round trip per take
  );
  if (!key) throw new Error(`lease take on an unknown key: ${keyId}`);
  // Other holders' expired leases go; the holder's own stays a row that the upsert below overwrites, so a
  // commit of this holder already under way still finds (and shrinks) the lease this take grows.
  const [sums] = await tx`
    WITH expired AS (
      DELETE FROM leases WHERE key_id = ${keyId} AND holder <> ${holder} AND expires_at <= ${now}
    )
    SELECT coalesce(sum(amount), 0) AS leased,
      coalesce(sum(amount) FILTER (WHERE holder = ${holder}), 0) AS mine
    FROM leases WHERE key_id = ${keyId} AND expires_at > ${now}`;
  const view = leaseViewFromRow({ ...key, ...sums }, now);
  const decision = take.decide(view, capsFromRow(key));
  checkDecision(view, decision);
  const { grant, reserved } = decision;
  if (grant === 0n && reserved === 0n) return { view, grant };
  const amount = view.mine + grant;
  if (amount > 0n) {
    await tx`
      INSERT INTO leases (key_id, holder, amount, expires_at)
      VALUES (${keyId}, ${holder}, ${amount.toString()}, ${now + take.ttlMs})
      ON CONFLICT (key_id, holder) DO UPDATE SET amount = EXCLUDED.amount, expires_at = EXCLUDED.expires_at`;
  }
  if (reserved > 0n) {
    const w = addToWindow(view.window, now, 0n, reserved);
    await tx`
      UPDATE keys SET hour_start = ${w.hourStart}, day_start = ${w.dayStart},
        hour_spent = ${w.hourSpent.toString()}, day_spent = ${w.daySpent.toString()},
        hour_reserved = ${w.hourReserved.toString()}, day_reserved = ${w.dayReserved.toString()}
      WHERE id = ${keyId}`;
  }
  return { view, grant };
}

export class PgLedger implements LedgerStore {
  constructor(private readonly sql: Sql) {}

  commit(batch: CommitBatch): Promise<void> {
    return commitBatch(this.sql, batch);
  }

  async listOpen(): Promise<UsageRow[]> {
    return (await this.sql`SELECT * FROM usage_checkpoints ORDER BY request_id`).map(usageFromRow);
  }

  /** In one transaction (retried, bounded, on a deadlock or a serialization failure: `decide` is pure). */
  async takeLease(take: LeaseTake): Promise<{ view: LeaseView; grant: bigint }> {
    for (let attempt = 1;; attempt++) {
      try {
        return await this.sql.begin((tx) => takeOnce(tx, take));
      } catch (err) {
        const code = (err as { code?: unknown } | null)?.code;
        if (attempt >= TAKE_ATTEMPTS || typeof code !== "string" || !RETRIED_CODES.has(code)) throw err;
      }
    }
  }

  /** One statement, one snapshot: the key's counters and windows with the sums of its live leases. */
  async leaseView(keyId: string, holder: string, now: number): Promise<LeaseView | null> {
    const [row] = await this.sql.unsafe(
      `SELECT credited, spent, ${WINDOW_COLUMNS},
        (SELECT coalesce(sum(amount), 0) FROM leases WHERE key_id = $1 AND expires_at > $3) AS leased,
        (SELECT coalesce(sum(amount), 0) FROM leases
          WHERE key_id = $1 AND holder = $2 AND expires_at > $3) AS mine
      FROM keys WHERE id = $1`,
      [keyId, holder, now],
      { prepare: true },
    );
    return row ? leaseViewFromRow(row, now) : null;
  }

  /** The rows are locked in key order first (as a commit locks them), so a renewal and a commit of the same
   *  holder never wait on each other crosswise. `expires_at > now` is checked again on the locked row. */
  async renewLeases(
    holder: string,
    keyIds: readonly string[],
    now: number,
    ttlMs: number,
  ): Promise<string[]> {
    if (keyIds.length === 0) return [];
    const rows = await this.sql`
      UPDATE leases SET expires_at = ${now + ttlMs}
      WHERE holder = ${holder} AND key_id IN (
        SELECT key_id FROM leases
        WHERE holder = ${holder} AND key_id = ANY(${keyIds as string[]}::text[]) AND expires_at > ${now}
        ORDER BY key_id FOR UPDATE)
      RETURNING key_id`;
    return rows.map((r) => r.key_id as string);
  }
}
