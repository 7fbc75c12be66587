/**
 * On a shared store, what other processes changed about keys reaches this one by polling the store's
 * change list (Store.keyChanges) every `everyMs`: a revocation, new caps or a new key take effect here within
 * about that long (docs/operator-guide.md "Several processes"). Each poll reads back OVERLAP_MS before the previous one
 * started, so a change stamped by a writer whose clock is a little behind, or committed while the previous
 * poll ran, is not missed; applying a change twice is harmless.
 */
import type { KeyStore } from "../store/store.ts";
import type { KeyRecord } from "../store/types.ts";
import type { Logger } from "../util/log.ts";

const OVERLAP_MS = 5_000;

export class KeyRefresh {
  readonly #timer: ReturnType<typeof setTimeout>;
  #since: number;
  #running = false;

  constructor(
    private readonly store: KeyStore,
    everyMs: number,
    since: number,
    /** `started`: when the poll that read `rec` began (the record is as of then or later). */
    private readonly apply: (rec: KeyRecord, started: number) => void,
    private readonly log: Logger,
  ) {
    this.#since = since - OVERLAP_MS;
    this.#timer = setInterval(() => void this.poll(), everyMs);
  }

  /** One poll (skipped while the previous one runs). */
  async poll(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    const started = Date.now();
    try {
      for (const rec of await this.store.keyChanges(this.#since)) this.apply(rec, started);
      this.#since = started - OVERLAP_MS;
    } catch (err) {
      this.log.error("key refresh failed", { error: err instanceof Error ? err.message : String(err) });
    } finally {
      this.#running = false;
    }
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
