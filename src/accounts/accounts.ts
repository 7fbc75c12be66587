/**
 * The key table: lookups by id, by key hash and by presented key (a bounded cache), key creation and admin
 * changes of a key's metadata (written through at once). Money goes through the Ledger (ledger.ts) it
 * holds — by default the in-memory one (memory_ledger.ts), as this process is the only writer of its store.
 */
import { generateKey, hashKey, keyHint } from "./api_key.ts";
import { type Account, newAccount } from "./account.ts";
import type { Ledger } from "./ledger.ts";
import { MemoryLedger } from "./memory_ledger.ts";
import type { Store } from "../store/store.ts";
import type { KeyRecord } from "../store/types.ts";

export type { Account } from "./account.ts";

const KEY_CACHE_MAX = 100_000;

export interface NewKeyOptions {
  balance: bigint;
  name?: string | null;
  membership?: "private" | null;
}

/** Builds the ledger over a store (the in-memory one unless told otherwise). */
export type LedgerFactory = (store: Store, commitIntervalMs: number) => Ledger;

export class Accounts {
  readonly #byId = new Map<string, Account>();
  readonly #byHash = new Map<string, Account>();
  /** Presented key → account, so a known key is not hashed on every request. Memory only, bounded. */
  readonly #byKey = new Map<string, Account>();

  private constructor(private readonly store: Store, readonly ledger: Ledger) {}

  static async load(
    store: Store,
    commitIntervalMs = 5,
    makeLedger: LedgerFactory = (s, ms) => new MemoryLedger(s, ms),
  ): Promise<Accounts> {
    const accounts = new Accounts(store, makeLedger(store, commitIntervalMs));
    for (const rec of await store.listKeys()) accounts.#index(rec);
    await accounts.ledger.recover((id) => accounts.#byId.get(id));
    return accounts;
  }

  byHash(hash: string): Account | undefined {
    return this.#byHash.get(hash);
  }

  byKey(key: string): Account | undefined {
    return this.#byKey.get(key);
  }

  /** Caches a verified key (unknown keys are not cached, so guessing cannot fill the cache). */
  rememberKey(key: string, acc: Account | undefined): Account | undefined {
    if (acc) {
      if (this.#byKey.size >= KEY_CACHE_MAX) this.#byKey.clear();
      this.#byKey.set(key, acc);
    }
    return acc;
  }

  get(id: string): Account | undefined {
    return this.#byId.get(id);
  }

  /** Creates a key; the full key is returned only here. */
  async create(opts: NewKeyOptions, now = Date.now()): Promise<{ account: Account; key: string }> {
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
      thetaPaused: false,
      membership: opts.membership ?? null,
      balance: opts.balance,
      credited: opts.balance,
      spent: 0n,
      caps: { hourlySpend: null, dailySpend: null, hourlyReserve: null, dailyReserve: null },
    };
    await this.store.createKey(rec);
    return { account: this.#index(rec), key };
  }

  /** Applies an operator change to a key's metadata in memory and waits until it is durable.
   *  Money is not the change's to touch: top-ups go through `topUp`. */
  async update(id: string, change: (rec: KeyRecord) => void): Promise<Account | undefined> {
    const acc = this.#byId.get(id);
    if (!acc) return undefined;
    const { balance, credited, spent } = acc.rec;
    change(acc.rec);
    if (acc.rec.balance !== balance || acc.rec.credited !== credited || acc.rec.spent !== spent) {
      Object.assign(acc.rec, { balance, credited, spent });
      throw new Error("Accounts.update changes metadata only; money moves through the ledger");
    }
    await this.store.updateKey(acc.rec);
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

  /** Credits a key (an operator top-up) and waits until it is durable. */
  async topUp(id: string, amount: bigint): Promise<Account | undefined> {
    const acc = this.#byId.get(id);
    if (!acc) return undefined;
    await this.ledger.credit(acc, amount);
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
    return this.ledger.close();
  }

  #index(rec: KeyRecord): Account {
    const acc = newAccount(rec);
    this.#byId.set(rec.id, acc);
    this.#byHash.set(rec.hash, acc);
    return acc;
  }
}
