/**
 * What a graceful shutdown waits for and then cuts (README "Graceful shutdown"): a count of the work in
 * flight and one signal that work listens to. `drain` waits until nothing is in flight or the grace ran
 * out, then aborts the signal — whatever is still in flight ends now, and nothing new starts — and waits,
 * briefly, for it to end.
 */
export class InFlight {
  #count = 0;
  /** Wakes a `drain` that waits (nothing left in flight, or `hurry`). */
  #wake: (() => void) | undefined;
  #hurried = false;
  readonly #cut = new AbortController();

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
   * Waits up to `graceMs` for everything in flight to end, then aborts the signal with `reason` and waits up
   * to `cutMs` more for what was cut. Returns how much was cut and how much was still in flight after that.
   */
  async drain(graceMs: number, reason: unknown, cutMs: number): Promise<{ cut: number; left: number }> {
    if (!this.#hurried) await this.#settled(graceMs);
    const cut = this.#count;
    this.#cut.abort(reason);
    if (this.#count > 0) await this.#settled(cutMs);
    return { cut, left: this.#count };
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
