/** The bytes every running keyed answer of a process keeps together, bounded (IDEMPOTENCY_MAX_TOTAL_BYTES). */
export class ByteBudget {
  #used = 0;
  constructor(readonly max: number) {}

  get used(): number {
    return this.#used;
  }

  /** Takes `n` bytes if they fit; false (nothing taken) otherwise. */
  take(n: number): boolean {
    if (this.#used + n > this.max) return false;
    this.#used += n;
    return true;
  }

  give(n: number): void {
    this.#used -= n;
  }
}
