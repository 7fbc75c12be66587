/** At most one operation in flight: callers meanwhile share its promise, and the next call starts a new one. */
export class SingleFlight<T> {
  #running: Promise<T> | undefined;

  run(op: () => Promise<T>): Promise<T> {
    return this.#running ??= op().finally(() => this.#running = undefined);
  }

  /** Resolves once the operation in flight, if any, has ended (a gateway's close). */
  async settled(): Promise<void> {
    await this.#running?.catch(() => {});
  }
}
