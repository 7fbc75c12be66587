/** Key records on Postgres (store.ts KeyStore): one `keys` row per key, its money counters beside its metadata. */
import type { KeyStore } from "./store.ts";
import type { KeyMeta, KeyRecord } from "./types.ts";
import type { LedgerEntry } from "./shop_types.ts";
import type { Sql } from "./pg_connect.ts";
import { keyFromRow, keyMetaRow, newKeyRow } from "./pg_rows.ts";
import { entryRow } from "./pg_shop_rows.ts";
import type { Logger } from "../util/log.ts";

type Row = Parameters<typeof keyFromRow>[0];

export class PgKeyRecords implements KeyStore {
  constructor(private readonly sql: Sql, private readonly log: Logger) {}

  /** A row as a record; family settings of the wrong shape are read as none and logged, the key still served. */
  #key = (row: Row): KeyRecord =>
    keyFromRow(
      row,
      (family) => this.log.warn("malformed family settings ignored", { key_id: row.id, family }),
    );

  async listKeys(): Promise<KeyRecord[]> {
    return (await this.sql`SELECT * FROM keys ORDER BY id`).map(this.#key);
  }

  async getKey(id: string): Promise<KeyRecord | null> {
    const [row] = await this.sql`SELECT * FROM keys WHERE id = ${id}`;
    return row ? this.#key(row) : null;
  }

  async getKeyByHash(hash: string): Promise<KeyRecord | null> {
    const [row] = await this.sql`SELECT * FROM keys WHERE hash = ${hash}`;
    return row ? this.#key(row) : null;
  }

  /** Served by keys_changed; createKey and updateKey stamp `changed_at` with this process's clock. */
  async keyChanges(since: number): Promise<KeyRecord[]> {
    return (await this.sql`SELECT * FROM keys WHERE changed_at >= ${since}`).map(this.#key);
  }

  async createKey(rec: KeyRecord, entry?: LedgerEntry): Promise<void> {
    try {
      await this.sql.begin((tx) => [
        tx`INSERT INTO keys ${tx(newKeyRow(rec, tx.json))}`,
        ...(entry ? [tx`INSERT INTO ledger_entries ${tx(entryRow(entry))}`] : []),
      ]);
    } catch (err) {
      if ((err as { code?: string }).code === "23505") throw new Error("key already exists");
      throw err;
    }
  }

  /** The stored hash and hint are kept: only rotateKeyHash changes them. */
  async updateKey(meta: KeyMeta): Promise<void> {
    const row = { ...keyMetaRow(meta, this.sql.json), changed_at: Date.now() };
    const { id: _id, hash: _hash, hint: _hint, ...set } = row;
    await this.sql`
      INSERT INTO keys ${this.sql({ ...row, credited: "0", spent: "0" })}
      ON CONFLICT (id) DO UPDATE SET ${this.sql(set)}`;
  }
}
