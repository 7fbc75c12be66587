/**
 * The theta account pool as one shared document (Store.updateDocument, named POOL_DOCUMENT) and its transitions, pure (spec §4.7,
 * docs/families/theta.md). Each upstream account serves one key at a time and one request at a time; the
 * queue is first come, first served across keys and processes. Every transition first drops what died
 * (holdings and tickets past their expiry: a killed process's) and ends by granting what can be granted, so
 * a release hands the account to the next waiter in the same atomic step.
 */

/** One request holding an account. */
export interface Holding {
  /** The ticket (the request id) that holds it. */
  ticket: string;
  /** The process (lease holder id) serving the request; it renews `expiresAt` while the request runs. */
  holder: string;
  expiresAt: number;
}

export interface AccountState {
  /** The key the account is bound to (until `releasedAt + idleMs` once idle), or null. */
  keyId: string | null;
  /** The session of the binding's last request (spec §4.7: one client session at a time). */
  session: string | null;
  busy: Holding | null;
  /** When its last request ended (Unix ms). */
  releasedAt: number;
  /** Models the upstream refused on this account for capacity, until when (Unix ms). */
  exhausted: Record<string, number>;
}

export interface Ticket {
  id: string;
  keyId: string;
  session: string;
  holder: string;
  /** Arrival order across processes. */
  seq: number;
  enqueuedAt: number;
  /** The waiter renews it; a ticket of a dead process goes at its expiry. */
  expiresAt: number;
}

/** The pool document's name in the store, the same in every process. Never changed: the stored pool (a KV
 *  value, a Postgres shared_documents row) is found under it. */
export const POOL_DOCUMENT = "theta_pool";

/** A type (not an interface) so it is a plain JSON document to the store (Store.updateDocument). */
export type PoolDoc = {
  v: 1;
  seq: number;
  accounts: AccountState[];
  queue: Ticket[];
};

export interface PoolConfig {
  /** Upstream accounts (THETA_UPSTREAM_KEYS). */
  accounts: number;
  /** A bound account becomes free for other keys after this long idle (THETA_IDLE_RELEASE_MS). */
  idleMs: number;
  /** Holdings and tickets live this long unless renewed (LEASE_TTL_MS). */
  ttlMs: number;
  /** Waiters beyond this many are refused at once (the document stays small). */
  maxQueue: number;
}

/** Where a ticket stands after a transition. */
export type TicketState =
  | { kind: "granted"; account: number; exhausted: Record<string, number> }
  | { kind: "waiting"; position: number; length: number }
  | { kind: "full"; length: number }
  | { kind: "gone" };

const newAccount = (): AccountState => ({
  keyId: null,
  session: null,
  busy: null,
  releasedAt: 0,
  exhausted: {},
});

/** A deep copy of the stored document (or a new one), with the configured number of accounts, and what died
 *  or expired by `now` removed. */
export function normalize(stored: unknown, now: number, cfg: PoolConfig): PoolDoc {
  const doc: PoolDoc = isPoolDoc(stored)
    ? structuredClone(stored)
    : { v: 1, seq: 0, accounts: [], queue: [] };
  while (doc.accounts.length < cfg.accounts) doc.accounts.push(newAccount());
  doc.accounts.length = cfg.accounts;
  for (const a of doc.accounts) {
    if (a.busy && a.busy.expiresAt <= now) {
      // Its process died: the account comes back to every key, not only (after the idle time) to this one.
      a.busy = null;
      a.keyId = null;
      a.session = null;
      a.releasedAt = now;
    }
    for (const [model, until] of Object.entries(a.exhausted)) if (until <= now) delete a.exhausted[model];
  }
  doc.queue = doc.queue.filter((t) => t.expiresAt > now);
  return doc;
}

function isPoolDoc(v: unknown): v is PoolDoc {
  return typeof v === "object" && v !== null && (v as PoolDoc).v === 1 &&
    Array.isArray((v as PoolDoc).accounts);
}

/** Whether the account is bound to its key at `now`: serving it, or idle for less than `idleMs`. */
export function isBound(a: AccountState, now: number, idleMs: number): boolean {
  return a.keyId !== null && (a.busy !== null || now < a.releasedAt + idleMs);
}

/**
 * Grants accounts to waiting tickets in arrival order: a ticket whose key has a bound account waits for that
 * one (a key holds at most one account; a new session of the key takes it over); another takes the first
 * account bound to no key. A ticket that cannot be served yet does not stop a later one that can.
 */
export function schedule(doc: PoolDoc, now: number, cfg: PoolConfig): void {
  const waiting: Ticket[] = [];
  for (const t of doc.queue) {
    const bound = doc.accounts.findIndex((a) => a.keyId === t.keyId && isBound(a, now, cfg.idleMs));
    const i = bound >= 0
      ? (doc.accounts[bound]!.busy === null ? bound : -1)
      : doc.accounts.findIndex((a) => a.busy === null && !isBound(a, now, cfg.idleMs));
    if (i < 0) {
      waiting.push(t);
      continue;
    }
    const a = doc.accounts[i]!;
    a.keyId = t.keyId;
    a.session = t.session;
    a.busy = { ticket: t.id, holder: t.holder, expiresAt: now + cfg.ttlMs };
  }
  doc.queue = waiting;
}

/**
 * The next moment after `now` at which the pool changes by time alone — an idle binding ends, a holding or a
 * ticket expires — or undefined. No store write signals these, so a waiter looks again then (account_pool.ts).
 */
export function nextTimedChange(doc: PoolDoc, now: number, idleMs: number): number | undefined {
  const times = [
    ...doc.accounts.map((a) =>
      a.busy ? a.busy.expiresAt : a.keyId === null ? Infinity : a.releasedAt + idleMs
    ),
    ...doc.queue.map((t) => t.expiresAt),
  ];
  const next = Math.min(...times.filter((at) => at > now));
  return Number.isFinite(next) ? next : undefined;
}

/** Where the ticket stands in `doc`. */
export function ticketState(doc: PoolDoc, id: string): TicketState {
  const account = doc.accounts.findIndex((a) => a.busy?.ticket === id);
  if (account >= 0) return { kind: "granted", account, exhausted: { ...doc.accounts[account]!.exhausted } };
  const position = doc.queue.findIndex((t) => t.id === id);
  return position >= 0 ? { kind: "waiting", position, length: doc.queue.length } : { kind: "gone" };
}

export interface Enqueue {
  id: string;
  keyId: string;
  session: string;
  holder: string;
}

/** A new waiter joins the end of the queue (refused when it is full), then grants are made. */
export function enqueue(doc: PoolDoc, e: Enqueue, now: number, cfg: PoolConfig): TicketState {
  if (doc.queue.length >= cfg.maxQueue) return { kind: "full", length: doc.queue.length };
  doc.queue.push({ ...e, seq: doc.seq++, enqueuedAt: now, expiresAt: now + cfg.ttlMs });
  schedule(doc, now, cfg);
  return ticketState(doc, e.id);
}

/** A waiter leaves (timed out, or its client went away): its ticket is removed; if it was granted meanwhile,
 *  the grant stands and is returned (the caller then uses or releases it). */
export function leave(doc: PoolDoc, id: string, now: number, cfg: PoolConfig): TicketState {
  const state = ticketState(doc, id);
  if (state.kind === "waiting") doc.queue.splice(state.position, 1);
  schedule(doc, now, cfg);
  return state.kind === "granted" ? state : { kind: "gone" };
}

/**
 * A request is done with its account: it is free for the next waiter of its key (or, once idle for `idleMs`,
 * of any key). `exhausted` records models the upstream refused for capacity on it, until when.
 */
export function release(
  doc: PoolDoc,
  account: number,
  id: string,
  now: number,
  cfg: PoolConfig,
  exhausted: Record<string, number> = {},
): void {
  const a = doc.accounts[account];
  if (a) {
    Object.assign(a.exhausted, exhausted);
    if (a.busy?.ticket === id) {
      a.busy = null;
      a.releasedAt = now;
    }
  }
  schedule(doc, now, cfg);
}

/** The process `holder` is alive: its holdings and tickets live another `ttlMs`. */
export function renew(doc: PoolDoc, holder: string, now: number, cfg: PoolConfig): void {
  for (const a of doc.accounts) if (a.busy?.holder === holder) a.busy.expiresAt = now + cfg.ttlMs;
  for (const t of doc.queue) if (t.holder === holder) t.expiresAt = now + cfg.ttlMs;
  schedule(doc, now, cfg);
}
