/** The keyed requests running in this gateway (docs/idempotency.md), by gateway key and Idempotency-Key. */
import { ByteBudget } from "./byte_budget.ts";
import { KeyedRun } from "./keyed_run.ts";

export interface KeyedRunLimits {
  detachMs: number;
  /** The most one answer keeps for replay. */
  maxBytes: number;
  /** The most every running answer of this gateway keeps together. */
  maxTotalBytes: number;
}

export class KeyedRuns {
  readonly #runs = new Map<string, KeyedRun>();
  readonly budget: ByteBudget;

  /** `holder`: this gateway's name in the store's claims, unique per start. */
  constructor(readonly holder: string, private readonly limits: KeyedRunLimits) {
    this.budget = new ByteBudget(limits.maxTotalBytes);
  }

  get(keyId: string, key: string): KeyedRun | undefined {
    return this.#runs.get(name(keyId, key));
  }

  /** A new run of the key, registered until `end`. */
  start(keyId: string, key: string, fingerprint: string): KeyedRun {
    const run = new KeyedRun(fingerprint, {
      detachMs: this.limits.detachMs,
      maxBytes: this.limits.maxBytes,
      budget: this.budget,
    });
    this.#runs.set(name(keyId, key), run);
    return run;
  }

  /** The run is over and stored (or given up): later retries go to the store. */
  end(keyId: string, key: string, run: KeyedRun): void {
    if (this.#runs.get(name(keyId, key)) === run) this.#runs.delete(name(keyId, key));
    run.release();
  }

  get size(): number {
    return this.#runs.size;
  }
}

const name = (keyId: string, key: string) => `${keyId}\u0000${key}`;
