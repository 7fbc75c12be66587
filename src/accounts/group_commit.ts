/**
 * Group commit: settlements mutate memory at once and become durable together, one atomic store
 * commit every `intervalMs` for everything pending. A kill -9 can lose at most the settlements of
 * the last interval — charges the user then does not pay (never a double charge).
 */
import type { Store } from "../store/store.ts";
import type { KeyRecord, UsageRow } from "../store/types.ts";

export class GroupCommitter {
  #keys = new Map<string, KeyRecord>();
  #usage: UsageRow[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #inflight: Promise<void> = Promise.resolve();
  #failures = 0;

  constructor(private readonly store: Store, private readonly intervalMs: number) {}

  /** Queue the current state of a key record (a structured copy is taken at flush time). */
  key(rec: KeyRecord): void {
    this.#keys.set(rec.id, rec);
    this.#schedule();
  }

  usage(row: UsageRow): void {
    this.#usage.push(row);
    this.#schedule();
  }

  get failures(): number {
    return this.#failures;
  }

  /** Write everything pending now; resolves when it is durable. */
  flush(): Promise<void> {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    const keys = [...this.#keys.values()].map((k) => structuredClone(k));
    const usage = this.#usage;
    this.#keys = new Map();
    this.#usage = [];
    const prev = this.#inflight;
    this.#inflight = prev.then(async () => {
      if (keys.length === 0 && usage.length === 0) return;
      try {
        await this.store.commit({ keys, usage });
      } catch (err) {
        // Keep the data: requeue for the next round rather than lose a settlement.
        this.#failures++;
        console.error(`group commit failed (${keys.length} keys, ${usage.length} rows): ${err}`);
        for (const k of keys) if (!this.#keys.has(k.id)) this.#keys.set(k.id, k);
        this.#usage.unshift(...usage);
        this.#schedule();
      }
    });
    return this.#inflight;
  }

  #schedule(): void {
    if (this.#timer === undefined) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        void this.flush();
      }, this.intervalMs);
    }
  }
}
