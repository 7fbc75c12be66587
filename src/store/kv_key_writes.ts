/** The writes of a key record on Deno KV that more than one step makes: a new key, and its change stamp. */
import { kvKeys } from "./kv_keys.ts";
import { addMoney, metaOf } from "./kv_money.ts";
import { HOUR } from "./shared_window.ts";
import type { KeyRecord } from "./types.ts";

/** Key changes are kept a little longer than the hour store.ts `keyChanges` promises. */
const KEY_CHANGE_TTL_MS = HOUR + 10 * 60_000;

/** Records a key change for `keyChanges`, in the same atomic as the metadata it changes. */
export function markChanged(op: Deno.AtomicOperation, keyId: string): void {
  op.set(kvKeys.keyChange(Date.now(), keyId), null, { expireIn: KEY_CHANGE_TTL_MS });
}

/** A new key in `op`: its metadata and lookup by hash under checks that neither exists, its change stamp
 *  and its counters (createKey, and a shop settlement that issues a key). */
export function writeNewKey(op: Deno.AtomicOperation, rec: KeyRecord): void {
  op.check({ key: kvKeys.key(rec.id), versionstamp: null })
    .check({ key: kvKeys.keyByHash(rec.hash), versionstamp: null })
    .set(kvKeys.key(rec.id), metaOf(rec))
    .set(kvKeys.keyByHash(rec.hash), rec.id);
  markChanged(op, rec.id);
  addMoney(op, rec.id, "credited", rec.credited);
  addMoney(op, rec.id, "spent", rec.spent);
}
