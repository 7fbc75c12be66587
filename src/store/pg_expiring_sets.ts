/**
 * Expiring sets on Postgres (store.ts ExpiringSets): a member in its row of `expiring_members` (migration 11,
 * pg_migrations.ts), its record as written; an expired member is invisible at once and deleted by the sweep.
 */
import type { Sql } from "./pg_connect.ts";
import { checkName } from "./json_document.ts";
import type { ExpiringSets, MemberChange, SetMember } from "./store.ts";
import type postgres from "postgres";

export class PgExpiringSets implements ExpiringSets {
  constructor(private readonly sql: Sql) {}

  async listMembers<M extends SetMember>(set: string, owner: string, now: number): Promise<M[]> {
    const rows = await this.sql`
      SELECT member FROM expiring_members
      WHERE set_name = ${checkName(set)} AND owner = ${owner} AND expires_at > ${now}
      ORDER BY expires_at, id`;
    return rows.map((r) => r.member as M);
  }

  async updateMembers<M extends SetMember>(
    set: string,
    owner: string,
    change: MemberChange<M>,
    _now: number,
  ): Promise<void> {
    checkName(set);
    const put = change.put;
    const remove = change.remove.filter((id) => id !== put?.id);
    if (remove.length === 0 && !put) return;
    await this.sql.begin((tx) => [
      ...(remove.length > 0
        ? [
          tx`DELETE FROM expiring_members WHERE set_name = ${set} AND owner = ${owner} AND id = ANY(${remove}::text[])`,
        ]
        : []),
      ...(put
        ? [tx`
          INSERT INTO expiring_members (set_name, owner, id, member, expires_at)
          VALUES (${set}, ${owner}, ${put.id}, ${
          tx.json(put as unknown as postgres.JSONValue)
        }, ${put.expiresAt})
          ON CONFLICT (set_name, owner, id) DO UPDATE
          SET member = EXCLUDED.member, expires_at = EXCLUDED.expires_at`]
        : []),
    ]);
  }
}

/** Deletes up to `batch` members expired at `now` (the store's sweep; the next takes the rest). */
export async function sweepMembers(sql: Sql, now: number, batch: number): Promise<void> {
  await sql`
    DELETE FROM expiring_members WHERE (set_name, owner, id) IN (
      SELECT set_name, owner, id FROM expiring_members WHERE expires_at <= ${now}
      LIMIT ${batch} FOR UPDATE SKIP LOCKED)`;
}
