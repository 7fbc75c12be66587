/**
 * A commit batch's id (CommitBatch.id): what makes Store.commit idempotent. A batch retried after a failure
 * part-way (KV: some of its atomic operations committed) or after a lost reply (Postgres: the statement
 * committed, the answer never came) is applied once: the store records the id with what it applied, in the
 * same atomic write, and skips what is recorded. Ids are kept for a day, far beyond any retry of a batch.
 */
import { DAY } from "./shared_window.ts";

/** Bounds the id before it goes into a key (KV) or a row (Postgres). */
export const MAX_BATCH_ID = 64;
/** How long a store remembers a committed batch's id (KV `expireIn`, the Postgres sweep). */
export const BATCH_ID_TTL_MS = DAY;

/** Refuses (RangeError, nothing written) an id that is empty or longer than MAX_BATCH_ID. */
export function checkBatchId(id: string): void {
  if (typeof id !== "string" || id.length === 0 || id.length > MAX_BATCH_ID) {
    throw new RangeError(`commit batch id must be 1..${MAX_BATCH_ID} characters`);
  }
}
