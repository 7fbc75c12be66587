/**
 * Backup and restore on Postgres (store.ts BackupStore): a snapshot is one read-only repeatable-read
 * transaction, so it is one moment of the store whatever every process writes meanwhile; a restore inserts
 * the records as they were.
 */
import type { Sql } from "./pg_connect.ts";
import { PgKeyRecords } from "./pg_key_records.ts";
import { PgUsage } from "./pg_usage.ts";
import { PgTariff } from "./pg_tariff.ts";
import { PgFiles } from "./pg_files.ts";
import { PgShop } from "./pg_shop.ts";
import { PgPayments } from "./pg_payments.ts";
import { entryRow, ownerRow, paymentRow } from "./pg_shop_rows.ts";
import type { BackupStore, SnapshotReads } from "./store.ts";
import type { KeyOwner, LedgerEntry, Payment } from "./shop_types.ts";
import type { Logger } from "../util/log.ts";

/** Tables whose any row makes a store not empty for a restore. */
const RESTORED_TABLES = [
  "keys",
  "usage_rows",
  "ledger_entries",
  "shop_packages",
  "payments",
  "key_owners",
  "files",
] as const;

/** Rows per INSERT of a restore. */
const CHUNK = 500;

export class PgBackup implements BackupStore {
  constructor(private readonly sql: Sql, private readonly log: Logger) {}

  readSnapshot<T>(read: (view: SnapshotReads) => Promise<T>): Promise<T> {
    return this.sql.begin("isolation level repeatable read read only", (tx) => {
      const sql = tx as unknown as Sql;
      const keys = new PgKeyRecords(sql, this.log);
      const usage = new PgUsage(sql);
      const files = new PgFiles(sql, false);
      const shop = new PgShop(sql);
      const payments = new PgPayments(sql);
      const tariff = new PgTariff(sql);
      return read({
        listKeys: () => keys.listKeys(),
        listLedger: (id) => payments.listLedger(id),
        listUsage: (id, opts) => usage.listUsage(id, opts),
        usageHours: (id, from, to) => usage.usageHours(id, from, to),
        getTariff: () => tariff.getTariff(),
        listFiles: (id, now) => files.listFiles(id, now),
        getFileData: (f) => files.getFileData(f),
        getFileSections: (f) => files.getFileSections(f),
        listPackages: () => shop.listPackages(),
        listPaymentMethods: () => shop.listPaymentMethods(),
        listPayments: (q) => payments.listPayments(q),
        listKeyOwners: (chat) => shop.listKeyOwners(chat),
      });
    }) as Promise<T>;
  }

  async isEmptyForRestore(): Promise<boolean> {
    for (const table of RESTORED_TABLES) {
      if ((await this.sql`SELECT 1 FROM ${this.sql(table)} LIMIT 1`).length > 0) return false;
    }
    return true;
  }

  restoreLedgerEntries(entries: readonly LedgerEntry[]): Promise<void> {
    return this.#insert("ledger_entries", entries.map(entryRow));
  }

  restorePayments(payments: readonly Payment[]): Promise<void> {
    return this.#insert("payments", payments.map(paymentRow));
  }

  restoreKeyOwners(owners: readonly KeyOwner[]): Promise<void> {
    return this.#insert("key_owners", owners.map(ownerRow));
  }

  async #insert(table: string, rows: readonly Record<string, unknown>[]): Promise<void> {
    for (let i = 0; i < rows.length; i += CHUNK) {
      await this.sql`INSERT INTO ${this.sql(table)} ${this.sql(rows.slice(i, i + CHUNK) as never)}`;
    }
  }
}
