/**
 * What a graceful shutdown waits for and then cuts (README "Graceful shutdown"): a count of the work in
 * flight, one signal that says the cut came, and the work to tell when it does (`onCut`). `drain` waits until
 * nothing is in flight or the grace ran out, then aborts the signal and tells the work still registered —
 * whatever is still in flight ends now, and nothing new starts — and waits, briefly, for it to end.
 */
export class InFlight {
  #count = 0;
  /** Wakes a `drain` that waits (nothing left in flight, or `hurry`). */
  #wake: (() => void) | undefined;
  #hurried = false;
  readonly #cut = new AbortController();
  /**
   * Told of the cut, in the order registered: a linked list, not listeners on `signal`. An AbortSignal scans
   * its whole listener list on every add (for a duplicate) and remove, and every request and every open
   * stream registers here: with 10,000 streams open each add or remove cost ≈45 µs. Nor a Set: a Set that
   * lives long rebuilds its table in the old generation as entries come and go, and every request's entry
   * cost ≈15 µs of CPU in garbage collection (bench/RESULTS.md, "Told of the shutdown's cut").
   */
  #first: CutWatcher | undefined;
  #last: CutWatcher | undefined;

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
    const w: CutWatcher = { fn, prev: this.#last, next: undefined };
    if (this.#cut.signal.aborted) {
      w.fn = w.prev = undefined;
      fn();
      return w;
    }
    if (this.#last) this.#last.next = w;
    else this.#first = w;
    this.#last = w;
    return w;
  }

  /** The watcher's function is no longer told of the cut (nothing if it was told already). */
  offCut(w: CutWatcher): void {
    if (w.fn === undefined) return;
    w.fn = undefined;
    if (w.prev) w.prev.next = w.next;
    else this.#first = w.next;
    if (w.next) w.next.prev = w.prev;
    else this.#last = w.prev;
    w.prev = w.next = undefined;
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
    const told: (() => void)[] = [];
    for (let w = this.#first; w; w = w.next) {
      told.push(w.fn!);
      w.fn = w.prev = undefined;
    }
    this.#first = this.#last = undefined;
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

/** One function to be told of the cut (InFlight.onCut): a node of the list, empty once told or taken back. */
export interface CutWatcher {
  fn: (() => void) | undefined;
  prev: CutWatcher | undefined;
  next: CutWatcher | undefined;
}

/** What work in flight needs of the cut: whether and why it came, and to be told (InFlight). */
export type CutWatch = Pick<InFlight, "signal" | "onCut" | "offCut">;
