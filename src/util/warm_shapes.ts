/**
 * The objects of the last stream of each kind, held until the next one of that kind replaces them.
 *
 * When the process goes quiet, V8's memory reducer collects the heap in a mode that keeps no hidden class (map)
 * without a live object of it. The optimised request path depends on the maps of the objects a stream makes (its
 * pipeline, the upstream response, the lease, the Response), so once none of them is alive that code is thrown
 * away ("embedded weak objects cleared") and the next streams run on code compiled again: after a minute without
 * requests a stream's first byte at one connection came ≈0.1 ms later, still after 30,000 streams
 * (docs/performance.md "After a rest"). One stream's objects per kind keep one object of each map alive, and the
 * memory reducer still returns the rest of the heap.
 *
 * What is held is bookkeeping, never a request's body or its parsed form (the pipeline's closures do not capture
 * them: engine/forward.ts `makePipeline`), and one stream per kind (a surface and an upstream protocol: a few). The
 * upstream response refers to its connection's read buffer, which holds the last bytes read from the upstream
 * until that connection reads again.
 */
export class WarmShapes {
  readonly #held = new Map<string, object>();

  /** Holds `objects` as the last stream of `kind`, letting go of the one before. */
  hold(kind: string, objects: object): void {
    this.#held.set(kind, objects);
  }

  /** How many kinds are held. */
  get kinds(): number {
    return this.#held.size;
  }
}
