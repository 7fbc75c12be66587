/**
 * Idempotency keys on Postgres (store.ts IdempotencyStore): one `idempotency_keys` row per (key_id, idem_key),
 * each change one statement guarded by the row's state and holder, so every process on the database agrees; a
 * done row holds the answer's head and body, set in the statement that makes it done. An expired row is
 * invisible at once and deleted by the store's sweep (pg_store.ts).
 */
import { checkAnswerLength } from "./idempotent_answer.ts";
import type { JSONValue } from "postgres";
import type { Sql } from "./pg_connect.ts";
import type { IdempotencyClaim, IdempotencyRecord, IdempotencyStore, StoredAnswerHead } from "./store.ts";

const RECORD_COLUMNS = "fingerprint, state, holder, lease_until, expires_at, answer";

export class PgIdempotency implements IdempotencyStore {
  constructor(private readonly sql: Sql) {}

  /** The insert takes a free key, or one whose record expired or whose lease ended; otherwise it leaves the row
   *  as it is but locked until the transaction ends, so the record read next is the one it ran into. */
  claimIdempotency(
    keyId: string,
    key: string,
    claim: { fingerprint: string; holder: string; now: number; leaseMs: number; ttlMs: number },
  ): Promise<IdempotencyClaim> {
    const { now } = claim;
    return this.sql.begin(async (tx) => {
      const taken = await tx`
        INSERT INTO idempotency_keys (key_id, idem_key, fingerprint, state, holder, lease_until, expires_at)
        VALUES (${keyId}, ${key}, ${claim.fingerprint}, 'running', ${claim.holder}, ${now + claim.leaseMs},
          ${now + claim.ttlMs})
        ON CONFLICT (key_id, idem_key) DO UPDATE SET
          fingerprint = EXCLUDED.fingerprint, state = 'running', holder = EXCLUDED.holder,
          lease_until = EXCLUDED.lease_until, expires_at = EXCLUDED.expires_at, answer = NULL, body = NULL
        WHERE idempotency_keys.expires_at <= ${now}
          OR (idempotency_keys.state = 'running' AND idempotency_keys.lease_until <= ${now})
        RETURNING 1`;
      if (taken.length > 0) return { claimed: true } as const;
      const [row] = await tx.unsafe(
        `SELECT ${RECORD_COLUMNS} FROM idempotency_keys WHERE key_id = $1 AND idem_key = $2`,
        [keyId, key],
      );
      return { claimed: false, record: recordFromRow(row!) } as const;
    });
  }

  async getIdempotency(keyId: string, key: string, now: number): Promise<IdempotencyRecord | null> {
    const [row] = await this.sql.unsafe(
      `SELECT ${RECORD_COLUMNS} FROM idempotency_keys WHERE key_id = $1 AND idem_key = $2 AND expires_at > $3`,
      [keyId, key, now],
      { prepare: true },
    );
    return row ? recordFromRow(row) : null;
  }

  async renewIdempotency(
    keyId: string,
    key: string,
    holder: string,
    now: number,
    leaseMs: number,
  ): Promise<boolean> {
    const renewed = await this.sql`
      UPDATE idempotency_keys SET lease_until = ${now + leaseMs}
      WHERE key_id = ${keyId} AND idem_key = ${key} AND state = 'running' AND holder = ${holder}
        AND expires_at > ${now}
      RETURNING 1`;
    return renewed.length > 0;
  }

  async finishIdempotency(
    keyId: string,
    key: string,
    holder: string,
    answer: { head: StoredAnswerHead; body: Uint8Array; expiresAt: number },
  ): Promise<boolean> {
    const { head, body, expiresAt } = answer;
    checkAnswerLength(head, body);
    const stored = { status: head.status, headers: head.headers, stream: head.stream, bytes: head.bytes };
    const done = await this.sql`
      UPDATE idempotency_keys
      SET state = 'done', answer = ${this.sql.json(stored as unknown as JSONValue)}, body = ${body},
        expires_at = ${expiresAt}
      WHERE key_id = ${keyId} AND idem_key = ${key} AND state = 'running' AND holder = ${holder}
      RETURNING 1`;
    return done.length > 0;
  }

  async idempotentBody(keyId: string, key: string, now: number): Promise<Uint8Array | null> {
    const [row] = await this.sql`
      SELECT body FROM idempotency_keys
      WHERE key_id = ${keyId} AND idem_key = ${key} AND state = 'done' AND expires_at > ${now}`;
    // The client's bytea is a Node Buffer, possibly a slice of a shared pool: copied into a plain Uint8Array.
    return row ? new Uint8Array(row.body) : null;
  }

  async releaseIdempotency(keyId: string, key: string, holder: string): Promise<void> {
    await this.sql`
      DELETE FROM idempotency_keys
      WHERE key_id = ${keyId} AND idem_key = ${key} AND state = 'running' AND holder = ${holder}`;
  }
}

function recordFromRow(row: Record<string, unknown>): IdempotencyRecord {
  const record: IdempotencyRecord = {
    fingerprint: row.fingerprint as string,
    state: row.state as IdempotencyRecord["state"],
    holder: row.holder as string,
    leaseUntil: Number(row.lease_until),
    expiresAt: Number(row.expires_at),
  };
  if (row.answer === null) return record;
  const a = row.answer as StoredAnswerHead;
  return { ...record, answer: { status: a.status, headers: a.headers, stream: a.stream, bytes: a.bytes } };
}
