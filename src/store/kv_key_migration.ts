/** A key record of the older format (money inside the record) rewritten as metadata + counters (kv_money.ts). */
import { addMoney, legacyMoney, metaOf, withNewFields } from "./kv_money.ts";
import { commitChecked } from "./kv_atomic.ts";
import type { KeyMeta, KeyRecord } from "./types.ts";
import type { Logger } from "../util/log.ts";

/** Rewrites a record of the older format as metadata + counters; another process migrating it first wins. */
export async function migrateLegacyKey(
  kv: Deno.Kv,
  log: Logger,
  e: Deno.KvEntry<KeyRecord>,
): Promise<KeyMeta> {
  const money = legacyMoney(e.value);
  if (money.credited !== e.value.credited) {
    log.warn("stored credited differs from balance + spent; balance kept", {
      key_id: e.value.id,
      credited: String(e.value.credited),
    });
  }
  const meta = metaOf(withNewFields(e.value));
  const op = kv.atomic().check(e).set(e.key, meta);
  addMoney(op, e.value.id, "credited", money.credited);
  addMoney(op, e.value.id, "spent", money.spent);
  await commitChecked(op); // false: migrated meanwhile by another process, whose counters the caller reads
  return meta;
}
