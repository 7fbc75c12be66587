/**
 * The Ledger of a process that shares its store with others (several gateways on one Postgres, isolates on
 * one Deno KV): credit leases, docs/ledger_leases.md. A process takes a slice of a key's credit from the store
 * in one atomic step and places holds from it in memory, so a hold in steady state makes no store round trip;
 * settlements move credit from the lease to `spent` in the group commit; idle credit goes back after
 * `idleMs`; leases are renewed while the process lives and come back by themselves `ttlMs` after it dies.
 * A key with a cap (spec §5.5) takes exactly each hold from the store instead, checked against the shared
 * windows there with the caps as stored, and holds no credit beyond its open holds, so its caps hold across
 * processes as on one.
 */
import { GatewayError } from "../errors/gateway_error.ts";
import type { Store } from "../store/store.ts";
import type { Caps, LeaseTake, LeaseView, UsageRow } from "../store/types.ts";
import { type Account, addHold, settleHold } from "./account.ts";
import { capped, freeIn, isCapped, NOTHING, slice } from "./lease_take_rules.ts";
import { type CommitStats, GroupCommitter } from "./group_commit.ts";
import type { DebitOutcome, HoldRequest, Ledger, OpenCheckpoint } from "./ledger.ts";
import { outEntry } from "../util/entry_list.ts";
import type { Logger } from "../util/log.ts";
import { roll, type WindowCounters } from "./windows.ts";

export interface LeaseOptions {
  /** This process's holder id: random, never reused. */
  holder: string;
  /** Lease lifetime without renewal (LEASE_TTL_MS). */
  ttlMs: number;
  /** A key's unused lease goes back after this long without a hold (LEASE_IDLE_MS). */
  idleMs: number;
  commitIntervalMs: number;
  /** Where failed renewals and commits are logged. */
  log: Logger;
  /** Wall clock, Unix ms. */
  now?: () => number;
}

/** This process's lease of one key. */
interface Slot {
  acc: Account;
  /** Credit of the store lease not yet charged or given back (open holds included). May go below the
   *  open holds when a lease was lost (expired in the store): the next hold then takes again. */
  lease: bigint;
  /** When the store lease expires unless renewed (Unix ms). */
  expiresAt: number;
  /** The key's available credit in the store at the last view (credited − spent − every lease). */
  storeFree: bigint;
  /** The last hold or settlement (Unix ms), for the idle give-back. */
  touched: number;
  /** The store call in flight for this key: takes are made one at a time per key. */
  busy: Promise<unknown>;
  /** The caps the last take read in the store, newer than the key's record until the record changes
   *  (`keyChanged`); undefined: the record's. */
  caps: Caps | undefined;
  /** Open holds taken exactly from the store (their reserve already in the shared windows), counted by
   *  amount: a settlement of a hold of that amount is one of them (holds of one amount settle alike). */
  direct: Map<bigint, number>;
  /** The give-back of the lease's free credit once the key is capped, until it is durable. */
  shed: Promise<void> | undefined;
}

/** Rounds of the group commit a give-back waits for before a take counts the leases (a failed round is
 *  retried; past this many the take counts the credit still leased, which refuses rather than overspends). */
const SHED_ROUNDS = 5;

export class LeaseLedger implements Ledger {
  readonly #committer: GroupCommitter;
  readonly #slots = new Map<string, Slot>();
  readonly #now: () => number;
  readonly #timers: ReturnType<typeof setInterval>[];

  constructor(private readonly store: Store, private readonly opts: LeaseOptions) {
    this.#now = opts.now ?? Date.now;
    this.#committer = new GroupCommitter(store, opts.commitIntervalMs, opts.log, undefined, this.#now);
    const every = (ms: number, fn: () => void) => setInterval(fn, Math.max(1, Math.floor(ms)));
    this.#timers = [
      every(opts.ttlMs / 3, () => void this.renew()),
      every(opts.idleMs / 2, () => this.giveBackIdle()),
    ];
  }

  get holder(): string {
    return this.opts.holder;
  }

  available(acc: Account): bigint {
    const s = this.#slots.get(acc.rec.id);
    if (!s) return acc.rec.balance - acc.held;
    const free = s.lease - acc.held;
    return (free > 0n ? free : 0n) + s.storeFree;
  }

  spareCredit(acc: Account): bigint {
    const s = this.#slots.get(acc.rec.id);
    const free = (s?.lease ?? 0n) - acc.held;
    return free > 0n ? free : 0n;
  }

  /** This process's lease of the key (the admin view's part of `leased_usd` not yet committed). */
  leased(acc: Account): bigint {
    return this.#slots.get(acc.rec.id)?.lease ?? 0n;
  }

  windows(acc: Account, now: number): WindowCounters {
    return roll(acc.windows, now);
  }

  async hold(acc: Account, req: HoldRequest): Promise<void> {
    // Steady state: the lease covers it, no store round trip. Otherwise take (one take per key at a time),
    // and look again after each: holds placed meanwhile may have used what the take brought. A capped key
    // takes each hold exactly. A take that reads other caps than this process knew switches kinds.
    if (!isCapped(this.#caps(acc)) && this.#fromLease(acc, req)) return;
    await this.#serial(acc, async () => {
      for (let attempt = 0; attempt < 5; attempt++) {
        if (isCapped(this.#caps(acc))) {
          if (await this.#direct(acc, req)) return;
        } else {
          if (this.#fromLease(acc, req)) return;
          if (attempt < 4) await this.#take(acc, req);
        }
      }
      throw new GatewayError("request_reserve_exceeds_credit");
    });
  }

  /** The key's caps as this process last learned them: from the last take, or from its record when that
   *  changed since. */
  #caps(acc: Account): Caps {
    return this.#slots.get(acc.rec.id)?.caps ?? acc.rec.caps;
  }

  /**
   * The key's record changed (the key refresh read another process's change, or this process's admin change
   * is durable): its caps are the ones to go by again, and a key capped now gives back at once the credit
   * its lease holds beyond its open holds, so no other process counts that credit as open (caps.ts).
   */
  keyChanged(acc: Account): void {
    const s = this.#slots.get(acc.rec.id);
    if (!s) return;
    s.caps = undefined;
    if (isCapped(acc.rec.caps)) this.#giveBackFree(acc, s);
  }

  /** Gives back (through the group commit) what the lease holds beyond the open holds; `s.shed` resolves
   *  when that is durable. */
  #giveBackFree(acc: Account, s: Slot): void {
    const free = s.lease - acc.held;
    if (free <= 0n) return;
    this.#committer.money(acc.rec.id, 0n, 0n, { holder: this.opts.holder, returned: free, reserved: 0n });
    s.lease -= free;
    s.storeFree += free;
    const shed = this.#durable().finally(() => {
      if (s.shed === shed) s.shed = undefined;
    });
    s.shed = shed;
  }

  /** Resolves once everything queued before the call is durable (a failed round is retried), or after
   *  SHED_ROUNDS failed rounds. */
  async #durable(): Promise<void> {
    for (let round = 0; round < SHED_ROUNDS; round++) {
      const failures = this.#committer.failures;
      await this.#committer.flush();
      if (this.#committer.failures === failures) return;
    }
  }

  /** Places the hold from the lease if it covers it and is not about to expire. */
  #fromLease(acc: Account, { amount, now }: HoldRequest): boolean {
    const s = this.#slots.get(acc.rec.id);
    // The lease's expiry is on this ledger's clock (the store's view of time); `now` is the request's, for
    // the cap windows.
    if (!s || !this.#usable(s, this.#now()) || s.lease - acc.held < amount) return false;
    this.#place(acc, s, amount, now);
    return true;
  }

  /** A lease is used for new holds only while a renewal could still reach it in time. */
  #usable(s: Slot, now: number): boolean {
    return now < s.expiresAt - this.opts.ttlMs / 3;
  }

  #place(acc: Account, s: Slot, amount: bigint, now: number): void {
    addHold(acc, amount, now);
    s.touched = now;
  }

  /**
   * Takes what the hold misses, and a slice for the holds to come. Refuses when the store cannot cover it.
   * A key the store shows capped gets nothing: this process learns the caps and gives back its free credit,
   * and the hold is taken exactly (`#direct`).
   */
  /** One take of this process's lease of the key, the store's atomic step; `decide` sees the caps as stored. */
  #storeTake(acc: Account, now: number, decide: LeaseTake["decide"]) {
    return this.store.takeLease({
      keyId: acc.rec.id,
      holder: this.opts.holder,
      now,
      ttlMs: this.opts.ttlMs,
      decide,
    });
  }

  async #take(acc: Account, { amount }: HoldRequest): Promise<void> {
    const s = this.#slot(acc);
    const now = this.#now();
    const usable = this.#usable(s, now);
    const free = usable && s.lease > acc.held ? s.lease - acc.held : 0n;
    const need = amount - free;
    let caps: Caps | undefined;
    const { view, grant } = await this.#storeTake(acc, now, (v, c) => {
      caps = isCapped(c) ? c : undefined;
      return caps ? NOTHING : { grant: slice(need, freeIn(v)), reserved: 0n };
    });
    this.#saw(s, view, grant, now);
    if (caps) s.caps = { ...caps };
    // Capped now (read by this take, or by the key refresh while it ran): what it brought goes back too.
    if (isCapped(this.#caps(acc))) {
      this.#giveBackFree(acc, s);
      return;
    }
    if (grant === 0n) {
      throw new GatewayError(
        free + freeIn(view) <= 0n ? "insufficient_credit" : "request_reserve_exceeds_credit",
      );
    }
  }

  /**
   * A capped key: the hold itself is taken from the store, with its credit and the shared cap windows, under
   * the caps as stored. First the lease's free credit (taken before the cap) goes back and is durable, so the
   * take counts this process's open holds and no idle credit. False when the store shows no cap any more
   * (lifted): this process learns it and nothing was taken.
   */
  async #direct(acc: Account, req: HoldRequest): Promise<boolean> {
    const s = this.#slot(acc);
    this.#giveBackFree(acc, s);
    if (s.shed) await s.shed;
    const now = this.#now();
    let caps: Caps | undefined;
    const { view, grant } = await this.#storeTake(acc, now, (v, c) => {
      caps = c;
      return isCapped(c) ? capped(v, c, req.amount, req.capCodes, now) : NOTHING;
    });
    this.#saw(s, view, grant, now);
    s.caps = { ...caps! };
    if (!isCapped(s.caps)) return false;
    this.#place(acc, s, req.amount, req.now);
    s.direct.set(req.amount, (s.direct.get(req.amount) ?? 0) + 1);
    return true;
  }

  /** Takes run one at a time per key, in arrival order; a failed one does not stop the next. */
  #serial<T>(acc: Account, fn: () => Promise<T> | T): Promise<T> {
    const s = this.#slot(acc);
    const run = s.busy.then(fn, fn);
    s.busy = run.catch(() => {});
    return run;
  }

  /** Records what a take saw and granted. A lease the store had let expire restarts from the grant. */
  #saw(s: Slot, view: LeaseView, grant: bigint, now: number): void {
    if (view.mine === 0n && s.lease > 0n && now >= s.expiresAt) s.lease = 0n;
    s.lease += grant;
    s.storeFree = freeIn(view) - grant;
    if (grant > 0n) s.expiresAt = now + this.opts.ttlMs;
  }

  #slot(acc: Account): Slot {
    let s = this.#slots.get(acc.rec.id);
    if (!s) {
      s = {
        acc,
        lease: 0n,
        expiresAt: 0,
        storeFree: acc.rec.balance,
        touched: 0,
        busy: Promise.resolve(),
        caps: undefined,
        direct: new Map(),
        shed: undefined,
      };
      this.#slots.set(acc.rec.id, s);
    }
    return s;
  }

  settle(acc: Account, held: bigint, charge: bigint, row: UsageRow): void {
    this.#committer.settled(row.requestId);
    const s = this.#slot(acc);
    settleHold(acc, held, charge, row);
    s.touched = this.#now();
    // A hold taken exactly had its reserve counted by its take; one placed from the lease has it counted now,
    // with the charge. A capped key's lease is its open holds: what the hold did not charge goes back now.
    // Otherwise the rest stays in the lease for the next holds.
    const direct = s.direct.get(held) ?? 0;
    if (direct > 1) s.direct.set(held, direct - 1);
    else if (direct === 1) s.direct.delete(held);
    const returned = isCapped(this.#caps(acc)) && held > charge ? held - charge : 0n;
    s.lease -= charge + returned;
    this.#committer.money(acc.rec.id, charge, 0n, {
      holder: this.opts.holder,
      returned,
      reserved: direct > 0 ? 0n : held,
    });
    this.#committer.usage(row);
    // Until its commit, the rest still counts as open in every take's cap check: commit it now, not after
    // the interval (a capped key's holds pay a store round trip each anyway).
    if (returned > 0n) void this.#committer.flush();
  }

  applyCredit(acc: Account, amount: bigint): void {
    acc.rec.balance += amount;
    acc.rec.credited += amount;
    const s = this.#slots.get(acc.rec.id);
    if (s) s.storeFree += amount;
  }

  /** The store step counts every live lease as taken: this process's unused lease of the key goes back first
   *  (through the group commit, after the settlements before it), so only other processes' leases, which come
   *  back after LEASE_IDLE_MS, can stand in the way. */
  async debit(acc: Account, amount: bigint, write: () => Promise<DebitOutcome>): Promise<DebitOutcome> {
    const s = this.#slots.get(acc.rec.id);
    if (s && s.lease > acc.held) {
      const back = s.lease - acc.held;
      this.#committer.money(acc.rec.id, 0n, 0n, { holder: this.opts.holder, returned: back, reserved: 0n });
      s.lease -= back;
      s.storeFree += back;
    }
    await this.#committer.flush();
    const outcome = await write();
    if (outcome === "debited") {
      acc.rec.balance -= amount;
      acc.rec.credited -= amount;
      if (s) s.storeFree = s.storeFree > amount ? s.storeFree - amount : 0n;
    }
    return outcome;
  }

  /** Nothing to recover: holds were only in the memory of the process that placed them, and its leases
   *  expire by themselves. This ledger writes no drain checkpoints (docs/operator-guide.md "Several processes"). */
  recover(): Promise<void> {
    return Promise.resolve();
  }

  trackOpen(): OpenCheckpoint {
    return outEntry();
  }

  /** Renews this process's live leases; a lease the store no longer has is dropped (its credit may be
   *  another process's by now), and the holds still open on it settle into a zero lease. */
  async renew(): Promise<void> {
    const now = this.#now();
    const live = [...this.#slots].filter(([, s]) => s.lease > 0n && s.expiresAt > now);
    if (live.length === 0) return;
    const ids = live.map(([id]) => id);
    const seen = new Map(live.map(([id, s]) => [id, s.expiresAt]));
    let renewed: Set<string>;
    try {
      renewed = new Set(await this.store.renewLeases(this.opts.holder, ids, now, this.opts.ttlMs));
    } catch (err) {
      this.opts.log.error("lease renewal failed", {
        keys: ids.length,
        error: err instanceof Error ? err.message : String(err),
      });
      return;
    }
    for (const id of ids) {
      const s = this.#slots.get(id)!;
      if (renewed.has(id)) s.expiresAt = Math.max(s.expiresAt, now + this.opts.ttlMs);
      else if (s.expiresAt === seen.get(id)) s.lease = 0n; // unless a take made a new lease meanwhile
    }
  }

  /** Gives back the unused lease of every key with no open hold and no hold for `idleMs`. The give-back goes
   *  through the group commit, so it never overtakes a settlement of the same lease. */
  giveBackIdle(all = false): void {
    const now = this.#now();
    for (const [id, s] of this.#slots) {
      if (s.lease <= 0n || s.acc.held > 0n || (!all && now - s.touched < this.opts.idleMs)) continue;
      this.#committer.money(id, 0n, 0n, { holder: this.opts.holder, returned: s.lease, reserved: 0n });
      s.storeFree += s.lease;
      s.lease = 0n;
    }
  }

  flush(): Promise<void> {
    return this.#committer.flush();
  }

  drain(): Promise<void> {
    return this.#committer.drain();
  }

  async close(): Promise<void> {
    for (const t of this.#timers) clearInterval(t);
    this.#committer.stop();
    this.giveBackIdle(true);
    await this.#committer.flush();
  }

  stats(): CommitStats {
    return this.#committer.stats();
  }

  get failures(): number {
    return this.#committer.failures;
  }
}
