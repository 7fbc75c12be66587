/**
 * A gate between a store's writes and a snapshot (BackupStore.readSnapshot on KV): writes pass together, a
 * snapshot runs alone. A snapshot waits for the writes already in flight and holds new ones until it ends; a
 * write arriving while no snapshot waits costs one counter step.
 */
export class WriteGate {
  #writes = 0;
  /** Resolves when the snapshot running or waiting has ended; null when there is none. */
  #snapshot: Promise<void> | null = null;
  #drained: (() => void) | null = null;

  /** Runs one write through the gate. */
  async write<T>(fn: () => Promise<T>): Promise<T> {
    while (this.#snapshot !== null) await this.#snapshot;
    this.#writes++;
    try {
      return await fn();
    } finally {
      if (--this.#writes === 0) this.#drained?.();
    }
  }

  /** Runs `fn` with no write in flight: one snapshot at a time, after the writes in flight. */
  async snapshot<T>(fn: () => Promise<T>): Promise<T> {
    while (this.#snapshot !== null) await this.#snapshot;
    let end!: () => void;
    this.#snapshot = new Promise<void>((r) => end = r);
    try {
      if (this.#writes > 0) await new Promise<void>((r) => this.#drained = r);
      this.#drained = null;
      return await fn();
    } finally {
      this.#snapshot = null;
      end();
    }
  }

  /** Routes the named methods of `target` (bound functions: compose.ts) through `write`. */
  guard(target: object, names: readonly string[]): void {
    const t = target as Record<string, (...args: unknown[]) => Promise<unknown>>;
    for (const name of names) {
      const method = t[name];
      if (typeof method !== "function") throw new Error(`write gate: no method ${name}`);
      t[name] = (...args) => this.write(() => method(...args));
    }
  }
}
