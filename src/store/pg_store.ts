/**
 * The store on Postgres (`DATABASE_URL=postgres://…`), with the same contract as the Deno KV store
 * (testing/store_contract.ts runs on both): one object per capability (store.ts), each in its own module,
 * composed (compose.ts). Money is added as deltas to `numeric(40,0)` counters in one statement per group
 * commit; the schema is versioned (pg_migrations.ts); expired files, set members and idempotency records are
 * invisible at once and deleted by a sweep (per key when listed, every store every SWEEP_MS).
 */
import type { Store } from "./store.ts";
import { connect, naming, type Sql } from "./pg_connect.ts";
import { migrate, type Migration, MIGRATIONS } from "./pg_migrations.ts";
import { describeDatabase } from "./pg_url.ts";
import { BATCH_ID_TTL_MS } from "./batch_id.ts";
import { bindCapabilities } from "./compose.ts";
import { PgKeyRecords } from "./pg_key_records.ts";
import { PgLedger } from "./pg_ledger.ts";
import { PgUsage } from "./pg_usage.ts";
import { PgTariff } from "./pg_tariff.ts";
import { PgFiles, SWEEP_BATCH, sweepFiles } from "./pg_files.ts";
import { PgSessions } from "./pg_sessions.ts";
import { PgShop } from "./pg_shop.ts";
import { PgPayments } from "./pg_payments.ts";
import { PgDocuments, schemaTag } from "./pg_documents.ts";
import { PgExpiringSets, sweepMembers } from "./pg_expiring_sets.ts";
import { PgCounters } from "./pg_counters.ts";
import { PgIdempotency } from "./pg_idempotency.ts";
import { PgBackup } from "./pg_backup.ts";
import { Logger } from "../util/log.ts";

/** How often every expired file, set member, lease, session, bot update and idempotency record is deleted (KV's
 *  `expireIn` does this by itself). */
const SWEEP_MS = 60_000;

/** Every capability's methods, bound from its object (compose.ts). */
export interface PgStore extends Store {}

export class PgStore {
  readonly #sweeper: ReturnType<typeof setInterval>;

  /** `tag`: the suffix of the store's NOTIFY channels (pg_documents.ts schemaTag). */
  private constructor(
    private readonly sql: Sql,
    tag: string,
    private readonly onClose: () => Promise<void>,
    private readonly log: Logger,
  ) {
    bindCapabilities(this, [
      new PgKeyRecords(sql, log),
      new PgLedger(sql),
      new PgUsage(sql),
      new PgTariff(sql),
      new PgFiles(sql),
      new PgSessions(sql),
      new PgShop(sql),
      new PgPayments(sql),
      new PgDocuments(sql, tag, log),
      new PgExpiringSets(sql),
      new PgCounters(sql),
      new PgIdempotency(sql),
      new PgBackup(sql, log),
    ]);
    this.#sweeper = setInterval(() => void this.sweep(Date.now()), SWEEP_MS);
  }

  /** Connects and applies pending migrations, or refuses a newer store (format.ts StoreFormatError). `log`:
   *  where the sweep's and the pool watch's failures go (the gateway's; a store opened by hand, in a test or a
   *  bench, logs warnings and errors to stdout). `onClose` runs after the pool has ended; the store works
   *  through `through(client)` (a test injects faults there: testing/commit_once_contract.ts). `migrations`:
   *  this build's (a test adds one to play a newer build). */
  static open(
    url: string,
    log: Logger = new Logger("warn"),
    onClose: () => Promise<void> = () => Promise.resolve(),
    through: (sql: Sql) => Sql = (sql) => sql,
    migrations: readonly Migration[] = MIGRATIONS,
  ): Promise<PgStore> {
    return naming(url, async () => {
      const sql = connect(url, "gateway");
      try {
        const applied = await migrate(sql, migrations, `the Postgres store ${describeDatabase(url)}`);
        if (applied.length > 0) log.info("store migrated", { format: applied.at(-1), applied });
        return new PgStore(through(sql), await schemaTag(sql), onClose, log);
      } catch (err) {
        await sql.end({ timeout: 1 });
        throw err;
      }
    });
  }

  /** Deletes every file, set member, lease, dashboard session, bot update and idempotency record (with its kept
   *  answer) expired at `now` (a batch each: the next sweep takes the rest). An expired lease or session counts for nothing already (pg_ledger.ts, pg_sessions.ts);
   *  deleting it only keeps the table small. Batch ids older than BATCH_ID_TTL_MS go all at once: an index
   *  range that no writer locks (a commit only inserts a fresh id). */
  async sweep(now: number): Promise<void> {
    try {
      await sweepFiles(this.sql, now);
      await sweepMembers(this.sql, now, SWEEP_BATCH);
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
      await this.sql`
        DELETE FROM idempotency_keys WHERE (key_id, idem_key) IN (
          SELECT key_id, idem_key FROM idempotency_keys WHERE expires_at <= ${now}
          LIMIT ${SWEEP_BATCH} FOR UPDATE SKIP LOCKED)`;
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
