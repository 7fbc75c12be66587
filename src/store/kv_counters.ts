/**
 * Request counters on Deno KV (store.ts WindowCounters): a key's count of one counter in one value, changed
 * by an optimistic read-check-write (kv_atomic.ts), so several processes may share the KV file.
 */
import { commitChecked, optimistic } from "./kv_atomic.ts";
import { kvKeys } from "./kv_keys.ts";
import { DAY } from "./shared_window.ts";
import { type CountLimits, countOneMore, type CountVerdict, type RequestCount } from "./window_count.ts";
import type { WindowCounters } from "./store.ts";

export class KvCounters implements WindowCounters {
  constructor(private readonly kv: Deno.Kv) {}

  /** One value per (key, counter), kept a day after its last write: a day window is over by then. */
  countRequest(keyId: string, counter: string, now: number, limits: CountLimits): Promise<CountVerdict> {
    const key = kvKeys.requestCount(keyId, counter);
    return optimistic("countRequest", async () => {
      const read = await this.kv.get<RequestCount>(key);
      const { verdict, next } = countOneMore(read.value, now, limits);
      if (next === null) return { value: verdict };
      const op = this.kv.atomic().check(read).set(key, next, { expireIn: DAY });
      return (await commitChecked(op)) ? { value: verdict } : null;
    });
  }
}
