/**
 * Idempotency keys on Deno KV (store.ts IdempotencyStore): a key's record in one value under (keyId, key),
 * claimed, renewed, finished and released by checked writes (kv_atomic.ts), so processes sharing a KV file agree.
 * A finished answer's body is kept in the done record when small (INLINE_BYTES), else in chunks (kv_chunks.ts)
 * under a fresh id that only the done record names, written before it: the body is visible only once the record says done, and a holder whose claim was taken
 * over meanwhile leaves only chunks no record names (deleted at once, else removed by KV at their expiry).
 * Record and chunks carry KV's own expiry, a lower bound: a read checks `expiresAt` too.
 */
import { checkAnswerLength } from "./idempotent_answer.ts";
import type { IdempotencyClaim, IdempotencyRecord, IdempotencyStore, StoredAnswerHead } from "./store.ts";
import { commitChecked, optimistic } from "./kv_atomic.ts";
import { deleteChunks, readChunks, writeChunks } from "./kv_chunks.ts";
import { kvKeys } from "./kv_keys.ts";

/** The stored value: the record and, once done, its body — in the record when small, else the id of its chunks. */
interface StoredRecord extends IdempotencyRecord {
  bodyId?: string;
  body?: Uint8Array;
}

/** A body up to this long goes in the done record itself (one write, one read; a KV value holds 64 KiB, the
 *  record's head and headers included). */
const INLINE_BYTES = 32 * 1024;

export class KvIdempotency implements IdempotencyStore {
  constructor(private readonly kv: Deno.Kv) {}

  claimIdempotency(
    keyId: string,
    key: string,
    claim: { fingerprint: string; holder: string; now: number; leaseMs: number; ttlMs: number },
  ): Promise<IdempotencyClaim> {
    const at = kvKeys.idempotency(keyId, key);
    const { now } = claim;
    const running: IdempotencyRecord = {
      fingerprint: claim.fingerprint,
      state: "running",
      holder: claim.holder,
      leaseUntil: now + claim.leaseMs,
      expiresAt: now + claim.ttlMs,
    };
    const expireIn = Math.max(1, claim.ttlMs);
    return optimistic<IdempotencyClaim>("idempotency claim", async () => {
      // A new key, the usual case: one write under the check that there is no record.
      const blind = this.kv.atomic().check({ key: at, versionstamp: null }).set(at, running, { expireIn });
      if (await commitChecked(blind)) return { value: { claimed: true } };
      const found = await this.kv.get<StoredRecord>(at);
      const held = found.value;
      if (held !== null && held.expiresAt > now && (held.state === "done" || held.leaseUntil > now)) {
        return { value: { claimed: false, record: recordOf(held) } };
      }
      const op = this.kv.atomic().check(found).set(at, running, { expireIn });
      return await commitChecked(op) ? { value: { claimed: true } } : null;
    });
  }

  async getIdempotency(keyId: string, key: string, now: number): Promise<IdempotencyRecord | null> {
    const held = (await this.kv.get<StoredRecord>(kvKeys.idempotency(keyId, key))).value;
    return held !== null && held.expiresAt > now ? recordOf(held) : null;
  }

  renewIdempotency(
    keyId: string,
    key: string,
    holder: string,
    now: number,
    leaseMs: number,
  ): Promise<boolean> {
    const at = kvKeys.idempotency(keyId, key);
    return optimistic("idempotency renewal", async () => {
      const found = await this.kv.get<StoredRecord>(at);
      const held = found.value;
      if (!runningFor(held, holder) || held.expiresAt <= now) return { value: false };
      const op = this.kv.atomic().check(found).set(
        at,
        { ...held, leaseUntil: now + leaseMs },
        { expireIn: held.expiresAt - now },
      );
      return await commitChecked(op) ? { value: true } : null;
    });
  }

  async finishIdempotency(
    keyId: string,
    key: string,
    holder: string,
    answer: { head: StoredAnswerHead; body: Uint8Array; expiresAt: number },
  ): Promise<boolean> {
    const { head, body, expiresAt } = answer;
    checkAnswerLength(head, body);
    const at = kvKeys.idempotency(keyId, key);
    const inline = body.byteLength <= INLINE_BYTES;
    if (!inline && !runningFor((await this.kv.get<StoredRecord>(at)).value, holder)) return false;
    const bodyId = inline ? undefined : crypto.randomUUID();
    let done = false;
    try {
      if (bodyId !== undefined) await writeChunks(this.kv, kvKeys.idempotencyBody(bodyId), body, expiresAt);
      done = await optimistic("idempotency finish", async () => {
        const found = await this.kv.get<StoredRecord>(at);
        const held = found.value;
        if (!runningFor(held, holder)) return { value: false };
        const record: StoredRecord = {
          ...held,
          state: "done",
          expiresAt,
          answer: { status: head.status, headers: head.headers, stream: head.stream, bytes: head.bytes },
          ...(bodyId === undefined ? { body } : { bodyId }),
        };
        const op = this.kv.atomic().check(found).set(at, record, {
          expireIn: Math.max(1, expiresAt - Date.now()),
        });
        return await commitChecked(op) ? { value: true } : null;
      });
    } finally {
      // Chunks no record names; were this delete to fail, KV removes them at their expiry.
      if (!done && bodyId !== undefined) {
        await deleteChunks(this.kv, kvKeys.idempotencyBody(bodyId)).catch(() => {});
      }
    }
    return done;
  }

  async idempotentBody(keyId: string, key: string, now: number): Promise<Uint8Array | null> {
    const held = (await this.kv.get<StoredRecord>(kvKeys.idempotency(keyId, key))).value;
    if (held === null || held.state !== "done" || held.expiresAt <= now) return null;
    if (held.body !== undefined) return held.body;
    if (held.bodyId === undefined) return null;
    const body = await readChunks(this.kv, kvKeys.idempotencyBody(held.bodyId));
    // Chunks KV already removed (the answer's expiry passed on its clock): no answer rather than part of one.
    return body.byteLength === held.answer?.bytes ? body : null;
  }

  async releaseIdempotency(keyId: string, key: string, holder: string): Promise<void> {
    const at = kvKeys.idempotency(keyId, key);
    await optimistic("idempotency release", async () => {
      const found = await this.kv.get<StoredRecord>(at);
      if (!runningFor(found.value, holder)) return { value: undefined };
      return await commitChecked(this.kv.atomic().check(found).delete(at)) ? { value: undefined } : null;
    });
  }
}

function runningFor(held: StoredRecord | null, holder: string): held is StoredRecord {
  return held !== null && held.state === "running" && held.holder === holder;
}

/** The record as the store answers it (without its body or the id of its chunks). */
function recordOf(held: StoredRecord): IdempotencyRecord {
  const { bodyId: _bodyId, body: _body, ...record } = held;
  return record;
}
