/** Dashboard sessions on Postgres (store.ts SessionStore): `dashboard_sessions`, an expired row invisible at
 *  once and deleted by the store's sweep. */
import type { SessionStore } from "./store.ts";
import type { SessionRecord } from "./types.ts";
import type { Sql } from "./pg_connect.ts";

export class PgSessions implements SessionStore {
  constructor(private readonly sql: Sql) {}

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
}
