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
import { connect, naming, type Sql } from "./pg_connect.ts";
import { leaseView, renewLeases, takeLease } from "./pg_leases.ts";
import { migrate } from "./pg_migrations.ts";
import {
  keyFromRow,
  keyMetaRow,
  newKeyRow,
  toolLoopFromRow,
  usageFromRow,
  usageHourFromRow,
} from "./pg_rows.ts";
import { checkHourRange } from "./usage_hours.ts";
import { BATCH_ID_TTL_MS } from "./batch_id.ts";
import { commitBatch } from "./pg_commit.ts";
import * as pgFiles from "./pg_files.ts";
import { countRequest, thetaChannel, updateThetaPool, watchThetaPool } from "./pg_theta.ts";
import * as pgShop from "./pg_shop.ts";
import * as pgPayments from "./pg_payments.ts";
import { entryRow } from "./pg_shop_rows.ts";
import type { PaymentQuery } from "./shop_store.ts";
import { Logger } from "../util/log.ts";
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
/** The largest created_at: a first page starts "after" it. */
const NEWEST = { createdAt: "9223372036854775807", requestId: "" };

export class PgStore implements Store {
  readonly #sweeper: ReturnType<typeof setInterval>;

  /** `channel`: the NOTIFY channel of this store's theta pool (pg_theta.ts thetaChannel). */
  private constructor(
    private readonly sql: Sql,
    private readonly channel: string,
    private readonly onClose: () => Promise<void>,
    private readonly log: Logger,
  ) {
    this.#sweeper = setInterval(() => void this.sweep(Date.now()), SWEEP_MS);
  }

  /** Connects and applies pending migrations. `log`: where the sweep's and the pool watch's failures go (the
   *  gateway's; a store opened by hand, in a test or a bench, logs warnings and errors to stdout). `onClose`
   *  runs after the pool has ended; the store works through `through(client)` (a test injects faults there:
   *  commit_once_contract.ts). */
  static open(
    url: string,
    log: Logger = new Logger("warn"),
    onClose: () => Promise<void> = () => Promise.resolve(),
    through: (sql: Sql) => Sql = (sql) => sql,
  ): Promise<PgStore> {
    return naming(url, async () => {
      const sql = connect(url, "gateway");
      try {
        await migrate(sql);
        return new PgStore(through(sql), await thetaChannel(sql), onClose, log);
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

  commit(batch: CommitBatch): Promise<void> {
    return commitBatch(this.sql, batch);
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
    return watchThetaPool(this.sql, this.channel, onChange, this.log);
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

  putFile(
    file: StoredFile,
    data: Uint8Array,
    sectionsJson: Uint8Array,
    quota: FileQuota,
  ): Promise<PutFileResult> {
    return pgFiles.putFile(this.sql, file, data, sectionsJson, quota);
  }

  getFile(keyId: string, id: string, now: number): Promise<StoredFile | null> {
    return pgFiles.getFile(this.sql, keyId, id, now);
  }

  listFiles(keyId: string, now: number): Promise<StoredFile[]> {
    return pgFiles.listFiles(this.sql, keyId, now);
  }

  getFileData(file: StoredFile): Promise<Uint8Array> {
    return pgFiles.getFileData(this.sql, file);
  }

  getFileSections(file: StoredFile): Promise<FileSection[]> {
    return pgFiles.getFileSections(this.sql, file);
  }

  deleteFile(keyId: string, id: string): Promise<boolean> {
    return pgFiles.deleteFile(this.sql, keyId, id);
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
      await pgFiles.sweepFiles(this.sql, now);
      await this.sql`
        DELETE FROM tool_loops WHERE (key_id, id) IN (
          SELECT key_id, id FROM tool_loops WHERE expires_at <= ${now}
          LIMIT ${pgFiles.SWEEP_BATCH} FOR UPDATE SKIP LOCKED)`;
      await this.sql`
        DELETE FROM leases WHERE (key_id, holder) IN (
          SELECT key_id, holder FROM leases WHERE expires_at <= ${now}
          LIMIT ${pgFiles.SWEEP_BATCH} FOR UPDATE SKIP LOCKED)`;
      await this.sql`
        DELETE FROM dashboard_sessions WHERE hash IN (
          SELECT hash FROM dashboard_sessions WHERE expires_at <= ${now}
          LIMIT ${pgFiles.SWEEP_BATCH} FOR UPDATE SKIP LOCKED)`;
      await this.sql`
        DELETE FROM bot_updates WHERE update_id IN (
          SELECT update_id FROM bot_updates WHERE expires_at <= ${now}
          LIMIT ${pgFiles.SWEEP_BATCH} FOR UPDATE SKIP LOCKED)`;
      await this.sql`DELETE FROM commit_batches WHERE committed_at <= ${now - BATCH_ID_TTL_MS}`;
    } catch (err) {
      this.log.error("postgres store sweep failed", {
        error: err instanceof Error ? err.message : String(err),
      });
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

/** A position just past a row: its time and request id (opaque to callers; the report signs it). */
function cursorOf(row: UsageRow): string {
  return `${row.createdAt}:${row.requestId}`;
}

function parseCursor(cursor: string): { createdAt: string; requestId: string } {
  const m = /^(\d{1,19}):(.*)$/s.exec(cursor);
  if (!m) throw new Error("invalid usage cursor");
  return { createdAt: m[1]!, requestId: m[2]! };
}
