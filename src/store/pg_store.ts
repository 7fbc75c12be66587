/**
 * The store on Postgres (`DATABASE_URL=postgres://…`), with the same contract as the Deno KV store
 * (store_contract.ts runs on both). Money is added as deltas to `numeric(40,0)` counters in one statement per
 * group commit; the schema is versioned (pg_migrations.ts); expired files and tool loops are invisible at
 * once and deleted by a sweep (per key when listed, every store every SWEEP_MS).
 */
import type postgres from "postgres";
import type { TariffRow } from "../catalog/tariff_seed.ts";
import type {
  FileQuota,
  FileSection,
  PutFileResult,
  Store,
  StoredFile,
  ToolLoop,
  ToolLoopChange,
  UsagePage,
} from "./store.ts";
import type {
  CommitBatch,
  KeyMeta,
  KeyRecord,
  LeaseTake,
  LeaseView,
  SessionRecord,
  ThetaPoolDoc,
  UsageHour,
  UsageRow,
} from "./types.ts";
import { connect, LOCKS, naming, type Sql } from "./pg_connect.ts";
import { leaseView, renewLeases, takeLease } from "./pg_leases.ts";
import { migrate } from "./pg_migrations.ts";
import {
  columnArrays,
  FILE_COLUMNS,
  fileFromRow,
  fileRow,
  keyFromRow,
  keyMetaRow,
  MONEY_COLUMNS,
  newKeyRow,
  toolLoopFromRow,
  unnestOf,
  USAGE_COLUMNS,
  usageFromRow,
  usageHourFromRow,
} from "./pg_rows.ts";
import { emptyWindow, HOUR } from "./shared_window.ts";
import { checkHourRange } from "./usage_hours.ts";
import { BATCH_ID_TTL_MS, checkBatchId } from "./batch_id.ts";
import { countRequest, thetaChannel, updateThetaPool, watchThetaPool } from "./pg_theta.ts";
import * as pgShop from "./pg_shop.ts";
import * as pgPayments from "./pg_payments.ts";
import { entryRow } from "./pg_shop_rows.ts";
import type { PaymentQuery } from "./shop_store.ts";
import type {
  KeyOwner,
  LedgerEntry,
  Package,
  PackagePatch,
  Payment,
  PaymentMethod,
  PaymentMethodPatch,
  PaymentSettlement,
  RefundedPayment,
  SettledPayment,
} from "./shop_types.ts";

/** How often every expired file, tool loop, lease, session and bot update is deleted (KV's `expireIn` does this
 *  by itself). */
const SWEEP_MS = 60_000;
/** Rows deleted per sweep statement, so a sweep never holds many row locks at once. */
const SWEEP_BATCH = 500;

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

/** The largest created_at: a first page starts "after" it. */
const NEWEST = { createdAt: "9223372036854775807", requestId: "" };

export class PgStore implements Store {
  readonly #sweeper: ReturnType<typeof setInterval>;

  /** `channel`: the NOTIFY channel of this store's theta pool (pg_theta.ts thetaChannel). */
  private constructor(
    private readonly sql: Sql,
    private readonly channel: string,
    private readonly onClose: () => Promise<void>,
  ) {
    this.#sweeper = setInterval(() => void this.sweep(Date.now()), SWEEP_MS);
  }

  /** Connects and applies pending migrations. `onClose` runs after the pool has ended (open.ts: the lock);
   *  the store works through `through(client)` (a test injects faults there: commit_once_contract.ts). */
  static open(
    url: string,
    onClose: () => Promise<void> = () => Promise.resolve(),
    through: (sql: Sql) => Sql = (sql) => sql,
  ): Promise<PgStore> {
    return naming(url, async () => {
      const sql = connect(url, "gateway");
      try {
        await migrate(sql);
        return new PgStore(through(sql), await thetaChannel(sql), onClose);
      } catch (err) {
        await sql.end({ timeout: 1 });
        throw err;
      }
    });
  }

  async listKeys(): Promise<KeyRecord[]> {
    return (await this.sql`SELECT * FROM keys ORDER BY id`).map(keyFromRow);
  }

  async getKey(id: string): Promise<KeyRecord | null> {
    const [row] = await this.sql`SELECT * FROM keys WHERE id = ${id}`;
    return row ? keyFromRow(row) : null;
  }

  async getKeyByHash(hash: string): Promise<KeyRecord | null> {
    const [row] = await this.sql`SELECT * FROM keys WHERE hash = ${hash}`;
    return row ? keyFromRow(row) : null;
  }

  /** Served by keys_changed; createKey and updateKey stamp `changed_at` with this process's clock. */
  async keyChanges(since: number): Promise<KeyRecord[]> {
    return (await this.sql`SELECT * FROM keys WHERE changed_at >= ${since}`).map(keyFromRow);
  }

  async createKey(rec: KeyRecord, entry?: LedgerEntry): Promise<void> {
    try {
      await this.sql.begin((tx) => [
        tx`INSERT INTO keys ${tx(newKeyRow(rec))}`,
        ...(entry ? [tx`INSERT INTO ledger_entries ${tx(entryRow(entry))}`] : []),
      ]);
    } catch (err) {
      if ((err as { code?: string }).code === "23505") throw new Error("key already exists");
      throw err;
    }
  }

  /** The stored hash and hint are kept: only rotateKeyHash changes them. */
  async updateKey(meta: KeyMeta): Promise<void> {
    const row = { ...keyMetaRow(meta), changed_at: Date.now() };
    const { id: _id, hash: _hash, hint: _hint, ...set } = row;
    await this.sql`
      INSERT INTO keys ${this.sql({ ...row, credited: "0", spent: "0" })}
      ON CONFLICT (id) DO UPDATE SET ${this.sql(set)}`;
  }

  async commit(batch: CommitBatch): Promise<void> {
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
    await this.sql.unsafe(COMMIT_SQL, [
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

  async listOpen(): Promise<UsageRow[]> {
    return (await this.sql`SELECT * FROM usage_checkpoints ORDER BY request_id`).map(usageFromRow);
  }

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

  async getTariff(): Promise<TariffRow[] | null> {
    const [row] = await this.sql`SELECT rows FROM tariff`;
    return row ? row.rows as TariffRow[] : null;
  }

  async putTariff(rows: TariffRow[]): Promise<void> {
    await this.sql`
      INSERT INTO tariff (rows) VALUES (${this.sql.json(rows as unknown as postgres.JSONValue)})
      ON CONFLICT (singleton) DO UPDATE SET rows = EXCLUDED.rows`;
  }

  takeLease(take: LeaseTake): Promise<{ view: LeaseView; grant: bigint }> {
    return takeLease(this.sql, take);
  }

  leaseView(keyId: string, holder: string, now: number): Promise<LeaseView | null> {
    return leaseView(this.sql, keyId, holder, now);
  }

  renewLeases(holder: string, keyIds: readonly string[], now: number, ttlMs: number): Promise<string[]> {
    return renewLeases(this.sql, holder, keyIds, now, ttlMs);
  }

  updateThetaPool<T>(
    change: (doc: ThetaPoolDoc | null) => { doc: ThetaPoolDoc | null; result: T },
  ): Promise<T> {
    return updateThetaPool(this.sql, this.channel, change);
  }

  watchThetaPool(onChange: () => void): () => void {
    return watchThetaPool(this.sql, this.channel, onChange);
  }

  countRequest(
    keyId: string,
    counter: string,
    now: number,
    limits: { hour: number | null; day: number | null },
  ): Promise<"ok" | "hour" | "day"> {
    return countRequest(this.sql, keyId, counter, now, limits);
  }

  async putSession(session: SessionRecord): Promise<void> {
    await this.sql`
      INSERT INTO dashboard_sessions (hash, key_id, key_hash, created_at, expires_at)
      VALUES (${session.hash}, ${session.keyId}, ${session.keyHash}, ${session.createdAt}, ${session.expiresAt})`;
  }

  async getSession(hash: string, now: number): Promise<SessionRecord | null> {
    const [row] = await this.sql`
      SELECT hash, key_id, key_hash, created_at, expires_at FROM dashboard_sessions
      WHERE hash = ${hash} AND expires_at > ${now}`;
    return row
      ? {
        hash: row.hash,
        keyId: row.key_id,
        keyHash: row.key_hash,
        createdAt: Number(row.created_at),
        expiresAt: Number(row.expires_at),
      }
      : null;
  }

  async deleteSession(hash: string): Promise<void> {
    await this.sql`DELETE FROM dashboard_sessions WHERE hash = ${hash}`;
  }

  listPackages(): Promise<Package[]> {
    return pgShop.listPackages(this.sql);
  }

  getPackage(id: string): Promise<Package | null> {
    return pgShop.getPackage(this.sql, id);
  }

  createPackage(p: Package): Promise<void> {
    return pgShop.createPackage(this.sql, p);
  }

  updatePackage(id: string, patch: PackagePatch): Promise<Package | null> {
    return pgShop.updatePackage(this.sql, id, patch);
  }

  listPaymentMethods(): Promise<PaymentMethod[]> {
    return pgShop.listPaymentMethods(this.sql);
  }

  getPaymentMethod(id: string): Promise<PaymentMethod | null> {
    return pgShop.getPaymentMethod(this.sql, id);
  }

  updatePaymentMethod(id: string, patch: PaymentMethodPatch): Promise<PaymentMethod | null> {
    return pgShop.updatePaymentMethod(this.sql, id, patch);
  }

  createPayment(p: Payment): Promise<void> {
    return pgPayments.createPayment(this.sql, p);
  }

  getPayment(id: string): Promise<Payment | null> {
    return pgPayments.getPayment(this.sql, id);
  }

  listPayments(q: PaymentQuery): Promise<Payment[]> {
    return pgPayments.listPayments(this.sql, q);
  }

  cancelPayment(id: string): Promise<Payment | null> {
    return pgPayments.cancelPayment(this.sql, id);
  }

  settlePayment(s: PaymentSettlement): Promise<SettledPayment> {
    return pgPayments.settlePayment(this.sql, s);
  }

  refundPayment(paymentId: string, entry: LedgerEntry, now: number): Promise<RefundedPayment> {
    return pgPayments.refundPayment(this.sql, paymentId, entry, now);
  }

  creditKey(entry: LedgerEntry): Promise<boolean> {
    return pgPayments.creditKey(this.sql, entry);
  }

  listLedger(keyId: string): Promise<LedgerEntry[]> {
    return pgPayments.listLedger(this.sql, keyId);
  }

  getKeyOwner(keyId: string): Promise<KeyOwner | null> {
    return pgShop.getKeyOwner(this.sql, keyId);
  }

  listKeyOwners(chatId?: number): Promise<KeyOwner[]> {
    return pgShop.listKeyOwners(this.sql, chatId);
  }

  updateKeyOwner(keyId: string, change: (o: KeyOwner) => KeyOwner | null): Promise<KeyOwner | null> {
    return pgShop.updateKeyOwner(this.sql, keyId, change);
  }

  keyIdsByHint(hint: string): Promise<string[]> {
    return pgShop.keyIdsByHint(this.sql, hint);
  }

  rotateKeyHash(keyId: string, oldHash: string, next: { hash: string; hint: string }): Promise<boolean> {
    return pgShop.rotateKeyHash(this.sql, keyId, oldHash, next);
  }

  firstSeen(updateId: number, now: number, ttlMs: number): Promise<boolean> {
    return pgShop.firstSeen(this.sql, updateId, now, ttlMs);
  }

  /** Under a per-key transaction lock: expired files are dropped from the count (and deleted), the live ones
   *  counted, and the file written with its bytes — visible to others only at the commit, whole. */
  async putFile(
    file: StoredFile,
    data: Uint8Array,
    sectionsJson: Uint8Array,
    quota: FileQuota,
  ): Promise<PutFileResult> {
    return await this.sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${LOCKS.fileQuota}, hashtext(${file.keyId}))`;
      await sweepFiles(tx, file.createdAt, file.keyId);
      const [used] = await tx`
        SELECT count(*)::int AS files, coalesce(sum(stored_bytes), 0)::int8 AS bytes
        FROM files WHERE key_id = ${file.keyId} AND expires_at > ${file.createdAt}`;
      if (used!.files + 1 > quota.maxFiles || Number(used!.bytes) + file.storedBytes > quota.maxBytes) {
        return "quota_exceeded" as const;
      }
      await tx`INSERT INTO files ${tx({ ...fileRow(file), data, sections: sectionsJson })}`;
      return "ok" as const;
    });
  }

  async getFile(keyId: string, id: string, now: number): Promise<StoredFile | null> {
    const [row] = await this.sql.unsafe(
      `SELECT ${FILE_COLUMNS} FROM files WHERE key_id = $1 AND id = $2 AND expires_at > $3`,
      [keyId, id, now],
      { prepare: true },
    );
    return row ? fileFromRow(row) : null;
  }

  async listFiles(keyId: string, now: number): Promise<StoredFile[]> {
    await sweepFiles(this.sql, now, keyId);
    const rows = await this.sql.unsafe(
      `SELECT ${FILE_COLUMNS} FROM files WHERE key_id = $1 AND expires_at > $2 ORDER BY created_at, id`,
      [keyId, now],
      { prepare: true },
    );
    return rows.map(fileFromRow);
  }

  async getFileData(file: StoredFile): Promise<Uint8Array> {
    const [row] = await this.sql`SELECT data FROM files WHERE key_id = ${file.keyId} AND id = ${file.id}`;
    return row ? bytesOf(row.data) : new Uint8Array(0);
  }

  async getFileSections(file: StoredFile): Promise<FileSection[]> {
    const [row] = await this.sql`SELECT sections FROM files WHERE key_id = ${file.keyId} AND id = ${file.id}`;
    if (!row || row.sections.byteLength === 0) return [];
    return JSON.parse(new TextDecoder().decode(bytesOf(row.sections))) as FileSection[];
  }

  /** The quota is counted from the live rows, so deleting the row gives it back. */
  async deleteFile(keyId: string, id: string): Promise<boolean> {
    const gone = await this.sql`DELETE FROM files WHERE key_id = ${keyId} AND id = ${id} RETURNING id`;
    return gone.length > 0;
  }

  async listToolLoops(keyId: string, now: number): Promise<ToolLoop[]> {
    const rows = await this.sql`
      SELECT * FROM tool_loops WHERE key_id = ${keyId} AND expires_at > ${now} ORDER BY expires_at, id`;
    return rows.map(toolLoopFromRow);
  }

  async updateToolLoops(keyId: string, change: ToolLoopChange): Promise<void> {
    const loop = change.open;
    const close = change.close.filter((id) => id !== loop?.id);
    if (close.length === 0 && !loop) return;
    await this.sql.begin((tx) => [
      ...(close.length > 0
        ? [tx`DELETE FROM tool_loops WHERE key_id = ${keyId} AND id = ANY(${close}::text[])`]
        : []),
      ...(loop
        ? [tx`
          INSERT INTO tool_loops (key_id, id, call_ids, updated_at, expires_at)
          VALUES (${keyId}, ${loop.id}, ${tx.json(loop.callIds)}, ${loop.updatedAt}, ${loop.expiresAt})
          ON CONFLICT (key_id, id) DO UPDATE
          SET call_ids = EXCLUDED.call_ids, updated_at = EXCLUDED.updated_at, expires_at = EXCLUDED.expires_at`]
        : []),
    ]);
  }

  /** Deletes every file, tool loop, lease, dashboard session and bot update expired at `now` (a batch each: the
   *  next sweep takes the rest). An expired lease or session counts for nothing already (pg_leases.ts, getSession);
   *  deleting it only keeps the table small. Batch ids older than BATCH_ID_TTL_MS go all at once: an index
   *  range that no writer locks (a commit only inserts a fresh id). */
  async sweep(now: number): Promise<void> {
    try {
      await sweepFiles(this.sql, now);
      await this.sql`
        DELETE FROM tool_loops WHERE (key_id, id) IN (
          SELECT key_id, id FROM tool_loops WHERE expires_at <= ${now}
          LIMIT ${SWEEP_BATCH} FOR UPDATE SKIP LOCKED)`;
      await this.sql`
        DELETE FROM leases WHERE (key_id, holder) IN (
          SELECT key_id, holder FROM leases WHERE expires_at <= ${now}
          LIMIT ${SWEEP_BATCH} FOR UPDATE SKIP LOCKED)`;
      await this.sql`
        DELETE FROM dashboard_sessions WHERE hash IN (
          SELECT hash FROM dashboard_sessions WHERE expires_at <= ${now}
          LIMIT ${SWEEP_BATCH} FOR UPDATE SKIP LOCKED)`;
      await this.sql`
        DELETE FROM bot_updates WHERE update_id IN (
          SELECT update_id FROM bot_updates WHERE expires_at <= ${now}
          LIMIT ${SWEEP_BATCH} FOR UPDATE SKIP LOCKED)`;
      await this.sql`DELETE FROM commit_batches WHERE committed_at <= ${now - BATCH_ID_TTL_MS}`;
    } catch (err) {
      console.error(`postgres store sweep failed: ${err instanceof Error ? err.message : err}`);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    try {
      await this.sql.end({ timeout: 5 });
    } finally {
      await this.onClose();
    }
  }
}

/**
 * Deletes files expired at `now` (of one key, or of every key), skipping rows another transaction holds:
 * a sweep never waits on a lock, so sweeps and uploads cannot deadlock. Whatever it skips is invisible anyway.
 */
async function sweepFiles(sql: Sql | postgres.TransactionSql, now: number, keyId?: string): Promise<void> {
  await sql`
    DELETE FROM files WHERE (key_id, id) IN (
      SELECT key_id, id FROM files
      WHERE expires_at <= ${now} ${keyId === undefined ? sql`` : sql`AND key_id = ${keyId}`}
      LIMIT ${SWEEP_BATCH} FOR UPDATE SKIP LOCKED)`;
}

/** The client's bytea (a Node Buffer, possibly a slice of a shared pool) copied into a plain Uint8Array. */
function bytesOf(buf: Uint8Array): Uint8Array {
  return new Uint8Array(buf);
}

/** The last item per key, in first-seen order (a batch upserts each row once). */
function lastOf<T>(items: readonly T[], keyOf: (item: T) => string): T[] {
  const byKey = new Map<string, T>();
  for (const item of items) byKey.set(keyOf(item), item);
  return byKey.size === items.length ? [...items] : [...byKey.values()];
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
