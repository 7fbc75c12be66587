/** Runs operations one at a time, in the order given: each starts after the previous one ended, failed or not. */
export class Serial {
  #last: Promise<unknown> = Promise.resolve();

  run<T>(op: () => Promise<T>): Promise<T> {
    const next = this.#last.then(op);
    this.#last = next.catch(() => {});
    return next;
  }

  /** Resolves once every operation given so far has ended (a gateway's close). */
  async settled(): Promise<void> {
    let last;
    do await (last = this.#last); while (last !== this.#last);
  }
}
