/** Key records on Postgres (store.ts KeyStore): one `keys` row per key, its money counters beside its metadata. */
import type { KeyStore } from "./store.ts";
import type { KeyMeta, KeyRecord } from "./types.ts";
import type { LedgerEntry } from "./shop_types.ts";
import type { Sql } from "./pg_connect.ts";
import { keyFromRow, keyMetaRow, newKeyRow } from "./pg_rows.ts";
import { entryRow } from "./pg_shop_rows.ts";

export class PgKeyRecords implements KeyStore {
  constructor(private readonly sql: Sql) {}

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
}
