/**
 * The theta account queue of one process over the shared pool document (pool_state.ts, spec §4.7): a request
 * takes a ticket, waits — without polling in a loop: woken by the store's change signal (KV watch, Postgres
 * LISTEN/NOTIFY), by this process's own changes, or when an idle binding ends — until its account is
 * granted, for at most `queueTimeoutMs`, and gives the account back when it settles. A waiter whose client
 * leaves quits the queue at once. While this process has waiters or holdings it renews them every `ttlMs / 3`, so those of a killed
 * process come back by themselves within `ttlMs`.
 */
import { GatewayError } from "../../errors/gateway_error.ts";
import type { Store } from "../../store/store.ts";
import {
  enqueue,
  leave,
  nextTimedChange,
  normalize,
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
  #stopWatch: (() => void) | undefined;
  #renewTimer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly store: Store,
    private readonly holder: string,
    private readonly cfg: PoolConfig,
    private readonly queueTimeoutMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Waits for an account; rejects with queue_timeout when none came in time or the client left. */
  async acquire(req: PoolRequest): Promise<AccountGrant> {
    const started = this.now();
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
        const left = deadline - now;
        if (left <= 0 || req.signal.aborted) break;
        await this.#nextChange(Math.min(left, RECHECK_MS, (at ?? Infinity) - now), req.signal);
        ({ state, at } = await this.#update((doc, now) => {
          schedule(doc, now, this.cfg);
          return { state: ticketState(doc, req.id), at: nextTimedChange(doc, now, this.cfg.idleMs) };
        }));
      }
      if (state.kind === "waiting") {
        state = await this.#update((doc, now) => leave(doc, req.id, now, this.cfg));
      }
      if (state.kind !== "granted") throw timedOut(seen, this.now() - started);
      const grant = this.#grant(state, req.id, this.now() - started);
      if (req.signal.aborted) {
        grant.release();
        throw timedOut({ kind: "gone" }, grant.waitedMs);
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
        this.#update((doc, now) => release(doc, state.account, id, now, this.cfg, exhausted))
          .catch((err) => {
            // The holding then expires by itself within ttlMs.
            console.error(`theta account release failed: ${err instanceof Error ? err.message : err}`);
          })
          .finally(() => this.#leave());
      },
    };
  }

  /** One atomic change of the pool; written only when it changed, and this process's waiters woken then. */
  async #update<T>(fn: (doc: PoolDoc, now: number) => T): Promise<T> {
    const now = this.now();
    let changed = false;
    const result = await this.store.updateThetaPool((stored) => {
      const doc = normalize(stored, now, this.cfg);
      const out = fn(doc, now);
      changed = JSON.stringify(doc) !== JSON.stringify(stored);
      return { doc: changed ? doc : null, result: out };
    });
    if (changed) this.#wake.dispatchEvent(new Event("change"));
    return result;
  }

  /** Resolves at the next change of the pool (any process), after `ms` at most, or when `signal` aborts. */
  #nextChange(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wake.removeEventListener("change", done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wake.addEventListener("change", done);
      signal.addEventListener("abort", done);
    });
  }

  /** A waiter or holding begins: the change signal and the renewal run while there is one. */
  #enter(): void {
    if (this.#active++ > 0) return;
    this.#stopWatch = this.store.watchThetaPool(() => this.#wake.dispatchEvent(new Event("change")));
    this.#renewTimer = setInterval(() => {
      this.#update((doc, now) => renew(doc, this.holder, now, this.cfg)).catch((err) => {
        console.error(`theta pool renewal failed: ${err instanceof Error ? err.message : err}`);
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

/** 429 queue_timeout, saying how long the request waited and the queue it saw. */
function timedOut(state: TicketState, waitedMs: number): GatewayError {
  const length = state.kind === "full" || state.kind === "waiting" ? state.length : undefined;
  return new GatewayError("queue_timeout", {
    headers: {
      "x-theta-queue-wait-ms": String(waitedMs),
      ...(length === undefined ? {} : { "x-theta-queue-length": String(length) }),
    },
    ...(length === undefined ? {} : { detail: `Запросов в очереди: ${length}.` }),
  });
}
