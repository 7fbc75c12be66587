/** Usage rows and their hourly sums on Deno KV (store.ts UsageStore): rows newest first per key, hourly
 *  counters per key and hour (kv_usage_hours.ts). */
import type { UsagePage, UsageStore } from "./store.ts";
import type { UsageHour, UsageRow } from "./types.ts";
import { kvKeys } from "./kv_keys.ts";
import { readUsageHours } from "./kv_usage_hours.ts";

export class KvUsage implements UsageStore {
  constructor(private readonly kv: Deno.Kv) {}

  async listUsage(keyId: string, opts: { limit: number; after?: string }): Promise<UsagePage> {
    const iter = this.kv.list<UsageRow>(
      { prefix: kvKeys.usagePrefix(keyId) },
      opts.after ? { limit: opts.limit, cursor: opts.after } : { limit: opts.limit },
    );
    const rows: UsageRow[] = [];
    const cursors: string[] = [];
    for await (const e of iter) {
      rows.push(e.value);
      cursors.push(iter.cursor);
    }
    return rows.length === opts.limit && iter.cursor
      ? { rows, cursors, next: iter.cursor }
      : { rows, cursors };
  }

  usageHours(keyId: string, fromMs: number, toMs: number): Promise<UsageHour[]> {
    return readUsageHours(this.kv, keyId, fromMs, toMs);
  }
}
