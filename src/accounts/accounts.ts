/**
 * The key table: lookups by id, by key hash and by presented key (a bounded cache), key creation and admin
 * changes of a key's metadata (written through at once). Money goes through the Ledger (ledger.ts) it
 * holds — the in-memory one (memory_ledger.ts) when this process is the only writer of its store, the
 * leasing one (lease_ledger.ts) when the store is shared; then a key this process has not seen is looked up
 * in the store, and the changes other processes make are read every `refreshMs` (key_refresh.ts).
 */
import { generateKey, hashKey, keyHint } from "./api_key.ts";
import { type Account, newAccount } from "./account.ts";
import type { Ledger } from "./ledger.ts";
import { MemoryLedger } from "./memory_ledger.ts";
import type { LeaseLedger } from "./lease_ledger.ts";
import { KeyRefresh } from "./key_refresh.ts";
import { ledgerEntry } from "./ledger_entry.ts";
import type { Store } from "../store/store.ts";
import type { KeyRecord } from "../store/types.ts";
import type { Logger } from "../util/log.ts";

export type { Account } from "./account.ts";

const KEY_CACHE_MAX = 100_000;

export interface NewKeyOptions {
  balance: bigint;
  name?: string | null;
  membership?: "private" | null;
}

/** Builds the ledger over a store (the in-memory one unless told otherwise). */
export type LedgerFactory = (store: Store, commitIntervalMs: number) => Ledger;

/** A store shared with other processes: the leasing ledger's holder and how often to read key changes. */
export interface SharedStoreOptions {
  ledger: LeaseLedger;
  refreshMs: number;
  /** Where a failed read of the key changes is logged. */
  log: Logger;
}

export class Accounts {
  readonly #byId = new Map<string, Account>();
  readonly #byHash = new Map<string, Account>();
  /** Presented key → account and the hash it had, so a known key is not hashed on every request (an entry
   *  whose account's hash changed since, by a rotation, no longer matches). Memory only, bounded. */
  readonly #byKey = new Map<string, { acc: Account; hash: string }>();

  #refresh: KeyRefresh | undefined;
  /**
   * Keys whose metadata this process is writing (count) or last wrote (Unix ms when the write was durable): a
   * refresh poll that started before then may carry the record as it was before the write, and must not put it
   * back over the write; the next poll, which starts later, reads the stored record with it.
   */
  readonly #writes = new Map<string, { open: number; doneAt: number }>();

  private constructor(
    private readonly store: Store,
    readonly ledger: Ledger,
    /** Set when the store is shared with other processes. */
    private readonly lease?: LeaseLedger,
  ) {}

  /** `log`: where the in-memory ledger's failed commits are logged. */
  static async load(
    store: Store,
    log: Logger,
    commitIntervalMs = 5,
    makeLedger: LedgerFactory = (s, ms) => new MemoryLedger(s, log, ms),
  ): Promise<Accounts> {
    const accounts = new Accounts(store, makeLedger(store, commitIntervalMs));
    for (const rec of await store.listKeys()) accounts.#index(rec);
    await accounts.ledger.recover((id) => accounts.#byId.get(id));
    return accounts;
  }

  /** The key table over a store other processes share (src/accounts/open_accounts.ts). */
  static async loadShared(store: Store, shared: SharedStoreOptions): Promise<Accounts> {
    const accounts = new Accounts(store, shared.ledger, shared.ledger);
    const started = Date.now();
    for (const rec of await store.listKeys()) accounts.#index(rec);
    accounts.#refresh = new KeyRefresh(
      store,
      shared.refreshMs,
      started,
      (rec, readSince) => accounts.#refreshed(rec, readSince),
      shared.log,
    );
    return accounts;
  }

  /** Whether other processes share the store (money then goes through leases). */
  get shared(): boolean {
    return this.lease !== undefined;
  }

  byHash(hash: string): Account | undefined {
    return this.#byHash.get(hash);
  }

  /** By key hash; on a shared store a key this process has not seen yet (created by another) is read from it. */
  async findByHash(hash: string): Promise<Account | undefined> {
    const known = this.#byHash.get(hash);
    if (known || !this.lease) return known;
    const rec = await this.store.getKeyByHash(hash);
    return rec ? this.#learn(rec) : undefined;
  }

  /** By id, as `findByHash`. */
  async find(id: string): Promise<Account | undefined> {
    const known = this.#byId.get(id);
    if (known || !this.lease) return known;
    const rec = await this.store.getKey(id);
    return rec ? this.#learn(rec) : undefined;
  }

  /**
   * On a shared store, brings the key's money up to date from the store (this process's settlements flushed
   * first) and returns the credit every process's live leases hold; undefined on a store of one process,
   * whose memory is already exact.
   */
  async syncMoney(acc: Account): Promise<bigint | undefined> {
    if (!this.lease) return undefined;
    await this.ledger.flush();
    const view = await this.store.leaseView(acc.rec.id, this.lease.holder, Date.now());
    if (!view) return 0n;
    acc.rec.credited = view.credited;
    acc.rec.spent = view.spent;
    acc.rec.balance = view.credited - view.spent;
    return view.leased;
  }

  /**
   * Credit a debit of the key could take now (Ledger.debit, a shop refund): on a store of one process the
   * available credit; on a shared store what the store's step would find free once this process gave back its
   * unused lease — credited − spent − every live lease + this process's lease beyond its open holds.
   */
  async debitable(acc: Account): Promise<bigint> {
    if (!this.lease) return this.ledger.available(acc);
    await this.ledger.flush();
    const view = await this.store.leaseView(acc.rec.id, this.lease.holder, Date.now());
    if (!view) return 0n;
    const unused = view.mine > acc.held ? view.mine - acc.held : 0n;
    return view.credited - view.spent - view.leased + unused;
  }

  /**
   * What the key spent in the current UTC hour and day as its spend caps count it (windows.ts, caps.ts): on a
   * shared store the shared windows every process adds its settlements to (this process's flushed first);
   * otherwise this process's own windows, which start empty when the process does.
   */
  async spentInWindows(acc: Account, now: number): Promise<{ hour: bigint; day: bigint }> {
    if (!this.lease) {
      const w = this.ledger.windows(acc, now);
      return { hour: w.hourSpent, day: w.daySpent };
    }
    await this.ledger.flush();
    const view = await this.store.leaseView(acc.rec.id, this.lease.holder, now);
    return { hour: view?.window.hourSpent ?? 0n, day: view?.window.daySpent ?? 0n };
  }

  byKey(key: string): Account | undefined {
    const known = this.#byKey.get(key);
    return known && known.acc.rec.hash === known.hash ? known.acc : undefined;
  }

  /** Caches a verified key (unknown keys are not cached, so guessing cannot fill the cache). */
  rememberKey(key: string, acc: Account | undefined): Account | undefined {
    if (acc) {
      if (this.#byKey.size >= KEY_CACHE_MAX) this.#byKey.clear();
      this.#byKey.set(key, { acc, hash: acc.rec.hash });
    }
    return acc;
  }

  get(id: string): Account | undefined {
    return this.#byId.get(id);
  }

  /** Creates a key, with the ledger entry of its initial credit ("initial") in the same atomic step; the full
   *  key is returned only here. */
  async create(opts: NewKeyOptions, now = Date.now()): Promise<{ account: Account; key: string }> {
    const { rec, key } = await this.draft(opts, now);
    const entry = rec.credited > 0n ? ledgerEntry(rec.id, "credit", rec.credited, "initial", now) : undefined;
    await this.store.createKey(rec, entry);
    return { account: this.#index(rec), key };
  }

  /**
   * A new key's record and its full key, not stored: `create` stores it; the key shop's settlement creates it
   * in its own atomic step with the payment (src/shop/), then `adopt`s it.
   */
  async draft(opts: NewKeyOptions, now: number): Promise<{ rec: KeyRecord; key: string }> {
    const key = generateKey();
    const rec: KeyRecord = {
      id: `key_${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`,
      hash: await hashKey(key),
      hint: keyHint(key),
      name: opts.name ?? null,
      createdAt: now,
      revoked: false,
      expiresAt: null,
      suspendedUntil: null,
      families: {},
      membership: opts.membership ?? null,
      balance: opts.balance,
      credited: opts.balance,
      spent: 0n,
      caps: { hourlySpend: null, dailySpend: null, hourlyReserve: null, dailyReserve: null },
    };
    return { rec, key };
  }

  /** A key another step of this process created in the store (a `draft` the shop's settlement stored). */
  adopt(rec: KeyRecord): Account {
    return this.#learn(rec);
  }

  /**
   * A new secret for the same key (the key shop's rotation): its id, money, settings and usage
   * history stay; the store swaps the hash and the lookup by hash in one atomic step. The old secret is refused
   * from the next request on — here at once (the lookup by hash and the presented-key cache follow the new
   * hash), on other processes of a shared store once their key refresh reads the change (KEY_REFRESH_MS,
   * key_refresh.ts), as a revocation. The full key is returned only here; undefined for an unknown key.
   */
  async rotate(id: string): Promise<{ account: Account; key: string } | undefined> {
    const acc = await this.find(id);
    if (!acc) return undefined;
    if (this.lease) {
      // Another process may have rotated it since this one last read it.
      const stored = await this.store.getKey(id);
      if (stored) this.#learn(stored);
    }
    const key = generateKey();
    const next = { hash: await hashKey(key), hint: keyHint(key) };
    if (!await this.#writing(id, () => this.store.rotateKeyHash(id, acc.rec.hash, next))) {
      throw new Error(`key ${id}: its hash changed while it was rotated`);
    }
    this.#learn({ ...acc.rec, ...next });
    return { account: acc, key };
  }

  /** Applies an operator change to a key's metadata in memory and waits until it is durable.
   *  Money is not the change's to touch: top-ups go through `topUp`. */
  async update(id: string, change: (rec: KeyRecord) => void): Promise<Account | undefined> {
    const acc = await this.find(id);
    if (!acc) return undefined;
    if (this.lease) {
      // Another process may have changed the key since this one last read it: change the stored metadata.
      const stored = await this.store.getKey(id);
      if (stored) this.#learn(stored);
    }
    const { balance, credited, spent } = acc.rec;
    change(acc.rec);
    if (acc.rec.balance !== balance || acc.rec.credited !== credited || acc.rec.spent !== spent) {
      Object.assign(acc.rec, { balance, credited, spent });
      throw new Error("Accounts.update changes metadata only; money moves through the ledger");
    }
    await this.#writing(id, () => this.store.updateKey(acc.rec));
    this.lease?.keyChanged(acc); // new caps count at once in this process's takes (lease_ledger.ts)
    return acc;
  }

  /**
   * Suspends a key until `until` (Unix ms; null lifts it) and waits until it is durable: the one mechanism of
   * the operator's `suspend` and the automatic rule (src/auth/suspension_rule.ts), spec §7.3 api_key_suspended.
   */
  suspend(id: string, until: number | null): Promise<Account | undefined> {
    return this.update(id, (r) => {
      r.suspendedUntil = until;
    });
  }

  /** Credits a key (an operator top-up): the credit and its ledger entry ("admin:topup") in one atomic store
   *  step, durable when this resolves; then this process's view (Ledger.applyCredit). */
  async topUp(id: string, amount: bigint, now = Date.now()): Promise<Account | undefined> {
    const acc = await this.find(id);
    if (!acc) return undefined;
    if (amount === 0n) return acc;
    if (!await this.store.creditKey(ledgerEntry(id, "credit", amount, "admin:topup", now))) return undefined;
    this.ledger.applyCredit(acc, amount);
    return acc;
  }

  /** Available credit: settled balance minus open holds (the ledger's). */
  available(acc: Account): bigint {
    return this.ledger.available(acc);
  }

  /** Credit held by this process's open requests, over every key (`GET /metrics`; a walk of the table). */
  held(): bigint {
    let sum = 0n;
    for (const acc of this.#byId.values()) sum += acc.held;
    return sum;
  }

  /** The ledger's durability side (flush, stats, failures), under its former name. */
  get committer(): Pick<Ledger, "flush" | "stats" | "failures"> {
    return this.ledger;
  }

  /** Shutdown began: see Ledger.drain. */
  drain(): Promise<void> {
    return this.ledger.drain();
  }

  close(): Promise<void> {
    this.#refresh?.stop();
    return this.ledger.close();
  }

  #index(rec: KeyRecord): Account {
    const acc = newAccount(rec);
    this.#byId.set(rec.id, acc);
    this.#byHash.set(rec.hash, acc);
    return acc;
  }

  /** Runs a write of key `id`'s metadata, marked for `#refreshed` while it runs and when it ended. */
  async #writing<T>(id: string, write: () => Promise<T>): Promise<T> {
    let w = this.#writes.get(id);
    if (!w) this.#writes.set(id, w = { open: 0, doneAt: 0 });
    w.open++;
    try {
      return await write();
    } finally {
      w.open--;
      w.doneAt = Date.now();
    }
  }

  /** A record the key refresh read in a poll that started at `readSince` (key_refresh.ts): learnt unless this
   *  process wrote the key's metadata meanwhile (then the next poll brings the stored record). */
  #refreshed(rec: KeyRecord, readSince: number): void {
    const w = this.#writes.get(rec.id);
    if (w && (w.open > 0 || readSince <= w.doneAt)) return;
    if (w) this.#writes.delete(rec.id);
    this.#learn(rec);
  }

  /** A record read from a shared store (or written by this process): a new key is indexed; a known one takes
   *  the stored metadata, its hash included (its money stays this process's view: the ledger moves it). */
  #learn(rec: KeyRecord): Account {
    const acc = this.#byId.get(rec.id);
    if (!acc) return this.#index(rec);
    if (acc.rec.hash !== rec.hash) {
      // Rotated: the old hash finds nothing from now on.
      this.#byHash.delete(acc.rec.hash);
      this.#byHash.set(rec.hash, acc);
    }
    const { balance, credited, spent } = acc.rec;
    Object.assign(acc.rec, rec, { balance, credited, spent });
    this.lease?.keyChanged(acc); // a key capped now gives back its idle leased credit (lease_ledger.ts)
    return acc;
  }
}
