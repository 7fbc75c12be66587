/** Usage rows and their hourly sums on Deno KV (store.ts UsageStore): a key's rows in entries newest first
 *  (kv_usage_entries.ts), hourly counters per key and hour (kv_usage_hours.ts). */
import type { UsagePage, UsageStore } from "./store.ts";
import type { UsageHour } from "./types.ts";
import { kvKeys } from "./kv_keys.ts";
import { readUsageHours } from "./kv_usage_hours.ts";
import { entryRows, type UsageEntry, UsageMerge } from "./kv_usage_entries.ts";

/** Entries read per KV round trip: an entry holds up to ENTRY_BYTES of rows. */
const BATCH = 16;

export class KvUsage implements UsageStore {
  constructor(private readonly kv: Deno.Kv) {}

  async listUsage(keyId: string, opts: { limit: number; after?: string }): Promise<UsagePage> {
    const prefix = kvKeys.usagePrefix(keyId);
    const merge = new UsageMerge(opts.limit, opts.after);
    const from = merge.from;
    const entries = this.kv.list<UsageEntry>(
      from ? { prefix, start: kvKeys.usage(keyId, from.createdAt, from.requestId) } : { prefix },
      { batchSize: BATCH },
    );
    for await (const e of entries) {
      if (merge.add(kvKeys.usagePlace(e.key), entryRows(e.value))) break;
    }
    return merge.page();
  }

  usageHours(keyId: string, fromMs: number, toMs: number): Promise<UsageHour[]> {
    return readUsageHours(this.kv, keyId, fromMs, toMs);
  }
}
