/** What both stores check of an answer kept for replay (store.ts IdempotencyStore.finishIdempotency). */
import type { StoredAnswerHead } from "./store.ts";

/** Refuses (RangeError, before anything is written) a head whose length is not the body's. */
export function checkAnswerLength(head: StoredAnswerHead, body: Uint8Array): void {
  if (head.bytes !== body.byteLength) {
    throw new RangeError(`idempotent answer of ${body.byteLength} bytes, its head says ${head.bytes}`);
  }
}
