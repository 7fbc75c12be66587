/**
 * Uploaded files on Postgres (store.ts FileStore, spec §8.2): one `files` row per file with its
 * bytes and serialised sections; the quota is counted from the live rows under a per-key lock. Expired files
 * are invisible at once and deleted by a sweep.
 */
import type postgres from "postgres";
import { LOCKS, type Sql } from "./pg_connect.ts";
import { FILE_COLUMNS, fileFromRow, fileRow } from "./pg_rows.ts";
import type { FileQuota, FileSection, FileStore, PutFileResult, StoredFile } from "./store.ts";

/** Rows deleted per sweep statement, so a sweep never holds many row locks at once. */
export const SWEEP_BATCH = 500;

/**
 * Deletes files expired at `now` (of one key, or of every key), skipping rows another transaction holds:
 * a sweep never waits on a lock, so sweeps and uploads cannot deadlock. Whatever it skips is invisible anyway.
 */
export async function sweepFiles(
  sql: Sql | postgres.TransactionSql,
  now: number,
  keyId?: string,
): Promise<void> {
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

export class PgFiles implements FileStore {
  /** `sweep`: listing a key's files deletes its expired ones (not in a read-only snapshot: pg_backup.ts). */
  constructor(private readonly sql: Sql, private readonly sweep = true) {}

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
    if (this.sweep) await sweepFiles(this.sql, now, keyId);
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
}
