/**
 * Whether a request's client has left, watched only once the request has lasted CLIENT_WATCH_AFTER_MS.
 *
 * Deno's `req.signal` of a served request is made when first read, and it starts an async op that waits for
 * the request's end: ≈6 µs of CPU per request under load, as much as the rest of a quick JSON request's
 * bookkeeping (docs/performance.md "The client's signal"). A request answered sooner never reads it. One read
 * later still learns of a client that left before: Deno aborts the signal at once
 * (tests/api/client_watch_test.ts). A client that leaves within the first CLIENT_WATCH_AFTER_MS is noticed
 * at that point: its upstream call is aborted then, or its answer, if it came first, is settled as any
 * other.
 */
import { deadline } from "../util/ticker.ts";

/** Long enough that an answer the upstream gives at once never reads the signal; short beside a generation. */
export const CLIENT_WATCH_AFTER_MS = 20;

export class ClientWatch {
  readonly #req: Request;
  readonly #gone: () => void;
  #signal: AbortSignal | undefined;
  #stopped = false;
  readonly #cancel: () => void;

  /** Calls `gone` once if the client leaves while watched (until `stop`). */
  constructor(req: Request, gone: () => void, afterMs = CLIENT_WATCH_AFTER_MS) {
    this.#req = req;
    this.#gone = gone;
    this.#cancel = deadline(afterMs, () => this.#watch());
  }

  /** The client is known to have left. */
  get aborted(): boolean {
    return this.#signal?.aborted ?? false;
  }

  stop(): void {
    this.#stopped = true;
    this.#cancel();
    this.#signal?.removeEventListener("abort", this.#gone);
  }

  #watch(): void {
    if (this.#stopped) return;
    const signal = this.#signal = this.#req.signal;
    if (signal.aborted) this.#gone();
    else signal.addEventListener("abort", this.#gone, { once: true });
  }
}
