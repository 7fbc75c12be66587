/**
 * The theta capabilities on Deno KV (store.ts updateThetaPool, watchThetaPool, countRequest): the pool
 * document in one value, a key's request count per counter in one value, each changed by an optimistic
 * read-check-write (kv_atomic.ts), so several processes may share the KV file.
 */
import { commitChecked, optimistic } from "./kv_atomic.ts";
import { kvKeys } from "./kv_keys.ts";
import { DAY } from "./shared_window.ts";
import {
  type CountLimits,
  countOneMore,
  type CountVerdict,
  decodeThetaPool,
  encodeThetaPool,
  type RequestCount,
} from "./theta_rules.ts";
import type { ThetaPoolDoc } from "./types.ts";
import type { Logger } from "../util/log.ts";

/**
 * How often a watch reads the pool's versionstamp. `kv.watch` on a local file sees only this process's
 * writes (denoland/deno#21640), so another process's change is seen by this poll, within this bound.
 */
export const KV_WATCH_POLL_MS = 100;

export class KvTheta {
  /** The stop functions of the watches running, all stopped when the store closes. */
  readonly #watches = new Set<() => void>();

  constructor(private readonly kv: Deno.Kv, private readonly log: Logger) {}

  /** `change` runs again on a lost check; a null doc writes nothing. */
  updatePool<T>(change: (doc: ThetaPoolDoc | null) => { doc: ThetaPoolDoc | null; result: T }): Promise<T> {
    return optimistic("updateThetaPool", async () => {
      const read = await this.kv.get<Uint8Array>(kvKeys.thetaPool());
      const { doc, result } = change(read.value === null ? null : decodeThetaPool(read.value));
      if (doc === null) return { value: result };
      const op = this.kv.atomic().check(read).set(kvKeys.thetaPool(), encodeThetaPool(doc));
      return (await commitChecked(op)) ? { value: result } : null;
    });
  }

  /**
   * `onChange` once per newer versionstamp of the pool, from `kv.watch` (this process's writes, at once) and
   * from a poll (every process's, within KV_WATCH_POLL_MS); also once when the watch starts, so a change
   * between the caller's last read and the watch is not missed.
   */
  watchPool(onChange: () => void): () => void {
    let last: string | undefined;
    let stopped = false;
    const seen = (versionstamp: string | null) => {
      const v = versionstamp ?? "";
      if (stopped || (last !== undefined && v <= last)) return; // versionstamps grow, as strings too
      last = v;
      onChange();
    };
    const reader = this.kv.watch([kvKeys.thetaPool()]).getReader();
    (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        seen(value[0]!.versionstamp);
      }
    })().catch((err) => {
      if (!stopped) this.log.error("kv theta pool watch failed, the poll goes on", { error: errorText(err) });
    });
    const poll = setInterval(() => {
      this.kv.get(kvKeys.thetaPool()).then((e) => seen(e.versionstamp), (err) => {
        if (!stopped) this.log.error("kv theta pool poll failed", { error: errorText(err) });
      });
    }, KV_WATCH_POLL_MS);
    const stop = () => {
      if (stopped) return;
      stopped = true;
      clearInterval(poll);
      this.#watches.delete(stop);
      reader.cancel().catch(() => {}); // already ended with the store
    };
    this.#watches.add(stop);
    return stop;
  }

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

  /** Stops every watch (before the KV handle closes). */
  close(): void {
    for (const stop of [...this.#watches]) stop();
  }
}

const errorText = (err: unknown) => err instanceof Error ? err.message : String(err);
