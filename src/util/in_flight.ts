/**
 * What a graceful shutdown waits for and then cuts (docs/operator-guide.md "Graceful shutdown"): a count of the work in
 * flight, one signal that says the cut came, and the work to tell when it does (`onCut`). `drain` waits until
 * nothing is in flight or the grace ran out, then aborts the signal and tells the work still registered —
 * whatever is still in flight ends now, and nothing new starts — and waits, briefly, for it to end.
 */
import { EntryList, type ListEntry, outEntry } from "./entry_list.ts";

export class InFlight {
  #count = 0;
  /** Wakes a `drain` that waits (nothing left in flight, or `hurry`). */
  #wake: (() => void) | undefined;
  #hurried = false;
  readonly #cut = new AbortController();
  /** Told of the cut, in the order registered (an EntryList: every request and open stream registers). */
  readonly #told = new EntryList<() => void>();

  /** Aborted with the drain's reason once the grace is over: from then on nothing new may start. */
  get signal(): AbortSignal {
    return this.#cut.signal;
  }

  get count(): number {
    return this.#count;
  }

  /** One more piece of work in flight; the returned function (idempotent) says it ended. */
  enter(): () => void {
    this.#count++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      if (--this.#count === 0) this.#wake?.();
    };
  }

  /**
   * Calls `fn` when the cut comes — at once if it came already (`signal.reason` then says why). The watcher
   * returned takes it back (`offCut`).
   */
  onCut(fn: () => void): CutWatcher {
    if (!this.#cut.signal.aborted) return this.#told.add(fn);
    fn();
    return outEntry();
  }

  /** The watcher's function is no longer told of the cut (nothing if it was told already). */
  offCut(w: CutWatcher): void {
    this.#told.remove(w);
  }

  /**
   * Waits up to `graceMs` for everything in flight to end, then aborts the signal with `reason` and waits up
   * to `cutMs` more for what was cut. Returns how much was cut and how much was still in flight after that.
   */
  async drain(graceMs: number, reason: unknown, cutMs: number): Promise<{ cut: number; left: number }> {
    if (!this.#hurried) await this.#settled(graceMs);
    const cut = this.#count;
    this.#cut.abort(reason);
    this.#tell();
    if (this.#count > 0) await this.#settled(cutMs);
    return { cut, left: this.#count };
  }

  /** Calls everything registered, once; one that throws does not keep the others from being told. */
  #tell(): void {
    const told = this.#told.takeAll();
    let failure: { err: unknown } | undefined;
    for (const fn of told) {
      try {
        fn();
      } catch (err) {
        failure ??= { err };
      }
    }
    if (failure) throw failure.err;
  }

  /** Ends the grace of a `drain` now (a second shutdown signal). */
  hurry(): void {
    this.#hurried = true;
    this.#wake?.();
  }

  /** Resolves when nothing is in flight, after `ms`, or on `hurry` — whichever comes first. */
  #settled(ms: number): Promise<void> {
    if (this.#count === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wake = done;
    });
  }
}

/** One function to be told of the cut (InFlight.onCut). */
export type CutWatcher = ListEntry<() => void>;

/** What work in flight needs of the cut: whether and why it came, and to be told (InFlight). */
export type CutWatch = Pick<InFlight, "signal" | "onCut" | "offCut">;
