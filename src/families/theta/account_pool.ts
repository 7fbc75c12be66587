/**
 * The theta account queue of one process over the shared pool document (pool_state.ts, spec §4.7): a request
 * takes a ticket, waits — without polling in a loop: woken by the store's change signal (KV watch, Postgres
 * LISTEN/NOTIFY), by this process's own changes, or when an idle binding ends — until its account is
 * granted, for at most `queueTimeoutMs`, and gives the account back when it settles. A waiter whose client
 * leaves quits the queue at once. While this process has waiters or holdings it renews them every `ttlMs / 3`, so those of a killed
 * process come back by themselves within `ttlMs`.
 */
import { GatewayError } from "../../errors/gateway_error.ts";
import type { SharedDocuments } from "../../store/store.ts";
import { Logger } from "../../util/log.ts";
import {
  enqueue,
  leave,
  nextTimedChange,
  normalize,
  POOL_DOCUMENT,
  type PoolConfig,
  type PoolDoc,
  release,
  renew,
  schedule,
  type TicketState,
  ticketState,
} from "./pool_state.ts";

/** Waiters also look again this often, in case a change signal was missed (not a busy loop: one read); and
 *  when the pool changes by time alone (nextTimedChange), which no store write signals. */
const RECHECK_MS = 1_000;

export interface PoolRequest {
  /** The request id: the ticket. */
  id: string;
  keyId: string;
  session: string;
  /** The client's request signal: a waiter whose client leaves quits the queue. */
  signal: AbortSignal;
}

/** An account granted to one request, until `release`. */
export interface AccountGrant {
  account: number;
  /** How long the request waited in the queue, ms. */
  waitedMs: number;
  /** Models the upstream refused for capacity on this account (until when, Unix ms), at the grant. */
  exhausted: Record<string, number>;
  /** Gives the account back; `exhausted` adds models the upstream refused on it meanwhile. */
  release(exhausted?: Record<string, number>): void;
}

export class AccountPool {
  readonly #wake = new EventTarget();
  #active = 0;
  /** The pool as this process last read or wrote it. */
  #latest: PoolDoc | undefined;
  #refreshing: Promise<void> | undefined;
  #stopWatch: (() => void) | undefined;
  #renewTimer: ReturnType<typeof setInterval> | undefined;
  /** Releases still being written: `close` waits for them, so none lands on a closed store. */
  readonly #releasing = new Set<Promise<void>>();

  constructor(
    private readonly store: SharedDocuments,
    private readonly holder: string,
    private readonly cfg: PoolConfig,
    private readonly queueTimeoutMs: number,
    private readonly now: () => number = Date.now,
    private readonly log: Logger = new Logger("error"),
  ) {}

  /** Stops the change watch and the renewal, after the releases in flight are written (the gateway's close). */
  async close(): Promise<void> {
    while (this.#releasing.size > 0) await Promise.all(this.#releasing);
    await this.#refreshing;
    this.#stopWatch?.();
    this.#stopWatch = undefined;
    clearInterval(this.#renewTimer);
    this.#renewTimer = undefined;
  }

  /** Waits for an account; rejects with queue_timeout when none came in time or the client left. */
  async acquire(req: PoolRequest): Promise<AccountGrant> {
    // The wait is bounded in real time (a monotonic clock); the pool's own times are the injected wall clock.
    const started = performance.now();
    const deadline = started + this.queueTimeoutMs;
    this.#enter();
    try {
      // With the ticket's state, when the pool next changes by time alone (an idle binding ends, say).
      let { state, at } = await this.#update((doc, now) => ({
        state: enqueue(doc, { ...req, holder: this.holder }, now, this.cfg),
        at: nextTimedChange(doc, now, this.cfg.idleMs),
      }));
      let seen = state; // the last queue this waiter saw, for the answer if it times out
      while (state.kind === "waiting") {
        seen = state;
        const now = this.now();
        const left = deadline - performance.now();
        if (left <= 0 || req.signal.aborted) break;
        const changed = await this.#nextChange(
          Math.max(0, Math.min(left, RECHECK_MS, (at ?? Infinity) - now)),
          req.signal,
        );
        // One read of the pool per process and change, shared by its waiters: a waiter woken by a change
        // looks at the document the change left (a grant there is final), otherwise it has the pool read.
        if (!changed && !req.signal.aborted) await this.#refresh();
        const latest = this.#latest!;
        state = ticketState(latest, req.id);
        at = nextTimedChange(latest, this.now(), this.cfg.idleMs);
        // An older document than this ticket's own may have landed last: ask the pool itself.
        if (state.kind === "gone") state = await this.#update((doc) => ticketState(doc, req.id));
      }
      if (state.kind === "waiting") {
        state = await this.#update((doc, now) => leave(doc, req.id, now, this.cfg));
      }
      const waited = Math.round(performance.now() - started);
      if (state.kind !== "granted") throw timedOut(seen, waited, this.queueTimeoutMs);
      const grant = this.#grant(state, req.id, waited);
      if (req.signal.aborted) {
        grant.release();
        throw timedOut({ kind: "gone" }, grant.waitedMs, this.queueTimeoutMs);
      }
      return grant;
    } catch (err) {
      this.#leave();
      throw err;
    }
  }

  #grant(state: Extract<TicketState, { kind: "granted" }>, id: string, waitedMs: number): AccountGrant {
    let released = false;
    return {
      account: state.account,
      waitedMs,
      exhausted: state.exhausted,
      release: (exhausted = {}) => {
        if (released) return;
        released = true;
        const written: Promise<void> = this.#update((doc, now) =>
          release(doc, state.account, id, now, this.cfg, exhausted)
        )
          .catch((err) => {
            // The holding then expires by itself within ttlMs.
            this.log.error("theta account release failed", { error: message(err) });
          })
          .finally(() => {
            this.#releasing.delete(written);
            this.#leave();
          });
        this.#releasing.add(written);
      },
    };
  }

  /**
   * One atomic change of the pool; written only when it changed. The document it leaves becomes this
   * process's latest view, and its waiters look at it.
   */
  async #update<T>(fn: (doc: PoolDoc, now: number) => T): Promise<T> {
    const now = this.now();
    let after: PoolDoc | undefined;
    const result = await this.store.updateDocument(POOL_DOCUMENT, (stored) => {
      const doc = normalize(stored, now, this.cfg);
      const out = fn(doc, now);
      after = doc;
      return { doc: JSON.stringify(doc) !== JSON.stringify(stored) ? doc : null, result: out };
    });
    this.#latest = after;
    this.#wake.dispatchEvent(new Event("change"));
    return result;
  }

  /** Reads the pool once for every waiter of this process (one read in flight at a time), granting what
   *  time alone made grantable. */
  #refresh(): Promise<void> {
    this.#refreshing ??= this.#update((doc, now) => schedule(doc, now, this.cfg))
      .catch((err) => this.log.error("theta pool read failed", { error: message(err) }))
      .finally(() => this.#refreshing = undefined);
    return this.#refreshing;
  }

  /** Resolves true at this process's next view of the pool, false after `ms` or when `signal` aborts. */
  #nextChange(ms: number, signal: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (changed: boolean) => () => {
        clearTimeout(timer);
        this.#wake.removeEventListener("change", onChange);
        signal.removeEventListener("abort", onAbort);
        resolve(changed);
      };
      const onChange = done(true);
      const onAbort = done(false);
      const timer = setTimeout(onAbort, ms);
      this.#wake.addEventListener("change", onChange);
      signal.addEventListener("abort", onAbort);
    });
  }

  /** A waiter or holding begins: the change signal and the renewal run while there is one. */
  #enter(): void {
    if (this.#active++ > 0) return;
    // Another process changed the pool: one read brings this process's view up to date.
    this.#stopWatch = this.store.watchDocument(POOL_DOCUMENT, () => void this.#refresh());
    this.#renewTimer = setInterval(() => {
      this.#update((doc, now) => renew(doc, this.holder, now, this.cfg)).catch((err) => {
        this.log.error("theta pool renewal failed", { error: message(err) });
      });
    }, Math.max(1, Math.floor(this.cfg.ttlMs / 3)));
  }

  #leave(): void {
    if (--this.#active > 0) return;
    this.#stopWatch?.();
    this.#stopWatch = undefined;
    clearInterval(this.#renewTimer);
    this.#renewTimer = undefined;
  }
}

const message = (err: unknown) => err instanceof Error ? err.message : String(err);

/** 429 queue_timeout, saying how long the request waited, the limit, and the queue it saw. */
function timedOut(state: TicketState, waitedMs: number, limitMs: number): GatewayError {
  const length = state.kind === "full" || state.kind === "waiting" ? state.length : undefined;
  const queue = length === undefined ? "" : ` Запросов в очереди: ${length}.`;
  return new GatewayError("queue_timeout", {
    headers: {
      "x-theta-queue-wait-ms": String(waitedMs),
      ...(length === undefined ? {} : { "x-theta-queue-length": String(length) }),
    },
    detail: `Предел ожидания: ${limitMs / 1000} с.${queue}`,
  });
}
