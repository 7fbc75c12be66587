/**
 * Idempotency keys on Deno KV (store.ts IdempotencyStore): a key's record in one value under (keyId, key),
 * claimed, renewed, finished and released by checked writes (kv_atomic.ts), so processes sharing a KV file agree.
 * A finished answer's body is kept in chunks (kv_chunks.ts) under a fresh id that only the done record names,
 * written before it: the body is visible only once the record says done, and a holder whose claim was taken
 * over meanwhile leaves only chunks no record names (deleted at once, else removed by KV at their expiry).
 * Record and chunks carry KV's own expiry, a lower bound: a read checks `expiresAt` too.
 */
import { checkAnswerLength } from "./idempotent_answer.ts";
import type { IdempotencyClaim, IdempotencyRecord, IdempotencyStore, StoredAnswerHead } from "./store.ts";
import { commitChecked, optimistic } from "./kv_atomic.ts";
import { deleteChunks, readChunks, writeChunks } from "./kv_chunks.ts";
import { kvKeys } from "./kv_keys.ts";

/** The stored value: the record and, once done, the id its body's chunks are under. */
interface StoredRecord extends IdempotencyRecord {
  bodyId?: string;
}

export class KvIdempotency implements IdempotencyStore {
  constructor(private readonly kv: Deno.Kv) {}

  claimIdempotency(
    keyId: string,
    key: string,
    claim: { fingerprint: string; holder: string; now: number; leaseMs: number; ttlMs: number },
  ): Promise<IdempotencyClaim> {
    const at = kvKeys.idempotency(keyId, key);
    const { now } = claim;
    return optimistic<IdempotencyClaim>("idempotency claim", async () => {
      const found = await this.kv.get<StoredRecord>(at);
      const held = found.value;
      if (held !== null && held.expiresAt > now && (held.state === "done" || held.leaseUntil > now)) {
        return { value: { claimed: false, record: recordOf(held) } };
      }
      const running: IdempotencyRecord = {
        fingerprint: claim.fingerprint,
        state: "running",
        holder: claim.holder,
        leaseUntil: now + claim.leaseMs,
        expiresAt: now + claim.ttlMs,
      };
      const op = this.kv.atomic().check(found).set(at, running, { expireIn: Math.max(1, claim.ttlMs) });
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
    if (!runningFor((await this.kv.get<StoredRecord>(at)).value, holder)) return false;
    const bodyId = crypto.randomUUID();
    let done = false;
    try {
      await writeChunks(this.kv, kvKeys.idempotencyBody(bodyId), body, expiresAt);
      done = await optimistic("idempotency finish", async () => {
        const found = await this.kv.get<StoredRecord>(at);
        const held = found.value;
        if (!runningFor(held, holder)) return { value: false };
        const record: StoredRecord = {
          ...held,
          state: "done",
          expiresAt,
          answer: { status: head.status, headers: head.headers, stream: head.stream, bytes: head.bytes },
          bodyId,
        };
        const op = this.kv.atomic().check(found).set(at, record, {
          expireIn: Math.max(1, expiresAt - Date.now()),
        });
        return await commitChecked(op) ? { value: true } : null;
      });
    } finally {
      // Chunks no record names; were this delete to fail, KV removes them at their expiry.
      if (!done) await deleteChunks(this.kv, kvKeys.idempotencyBody(bodyId)).catch(() => {});
    }
    return done;
  }

  async idempotentBody(keyId: string, key: string, now: number): Promise<Uint8Array | null> {
    const held = (await this.kv.get<StoredRecord>(kvKeys.idempotency(keyId, key))).value;
    if (held === null || held.state !== "done" || held.expiresAt <= now || held.bodyId === undefined) {
      return null;
    }
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

/** The record as the store answers it (without the id of its body's chunks). */
function recordOf(held: StoredRecord): IdempotencyRecord {
  const { bodyId: _bodyId, ...record } = held;
  return record;
}
