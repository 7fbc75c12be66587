/**
 * The live account table. The serving process owns every key's record and its open holds in
 * memory (it is the only writer of the embedded store), so authentication and billing take no
 * store round trip. Admin changes are written through at once; settlements go by group commit.
 * Holds are never persisted: a crashed process releases them by construction (spec §8.1 p.2–4).
 */
import { generateKey, hashKey, keyHint } from "./api_key.ts";
import { newCounters, roll, type WindowCounters } from "./windows.ts";
import type { Store } from "../store/store.ts";
import type { KeyRecord, UsageRow } from "../store/types.ts";
import { GroupCommitter } from "./group_commit.ts";

export interface Account {
  rec: KeyRecord;
  /** Sum of open holds, pico-USD. */
  held: bigint;
  /** Spend and reserve in the current hour and day, for the key's own caps (in memory only). */
  windows: WindowCounters;
  /** createdAt of the key's newest usage row written by this process (rows are keyed newest first). */
  lastRowAt: number;
}

const KEY_CACHE_MAX = 100_000;

export interface NewKeyOptions {
  balance: bigint;
  name?: string | null;
  membership?: "private" | null;
}

export class Accounts {
  readonly #byId = new Map<string, Account>();
  readonly #byHash = new Map<string, Account>();
  /** Presented key → account, so a known key is not hashed on every request. Memory only, bounded. */
  readonly #byKey = new Map<string, Account>();
  /** Requests that can tell what they would settle with if cut now (open streams), for drain checkpoints. */
  readonly #open = new Map<string, () => UsageRow | undefined>();
  readonly committer: GroupCommitter;

  private constructor(private readonly store: Store, commitIntervalMs: number) {
    this.committer = new GroupCommitter(store, commitIntervalMs);
  }

  static async load(store: Store, commitIntervalMs = 5): Promise<Accounts> {
    const accounts = new Accounts(store, commitIntervalMs);
    for (const rec of await store.listKeys()) accounts.#index(rec);
    await accounts.#settleCheckpoints();
    return accounts;
  }

  /**
   * Requests a killed process was still streaming while it drained: each is charged what its last
   * checkpoint says (an estimate, already capped at its hold), never more than the balance, and its
   * checkpoint is deleted in the same atomic write as the balance change — so a restart cannot charge twice.
   */
  async #settleCheckpoints(): Promise<void> {
    for (const row of await this.store.listOpen()) {
      const acc = this.#byId.get(row.keyId);
      if (!acc) {
        await this.store.commit({ keys: [], usage: [], closed: [row.requestId] });
        continue;
      }
      const free = acc.rec.balance > 0n ? acc.rec.balance : 0n;
      const charge = row.charged < free ? row.charged : free;
      acc.rec.balance -= charge;
      acc.rec.spent += charge;
      const settled = { ...row, charged: charge, writtenOff: row.writtenOff + row.charged - charge };
      await this.store.commit({ keys: [acc.rec], usage: [settled], closed: [row.requestId] });
    }
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

  /** Applies an operator change in memory and waits until it is durable. */
  async update(id: string, change: (rec: KeyRecord) => void): Promise<Account | undefined> {
    const acc = this.#byId.get(id);
    if (!acc) return undefined;
    change(acc.rec);
    this.committer.key(acc.rec);
    await this.committer.flush();
    return acc;
  }

  /** Available credit: settled balance minus open holds. */
  available(acc: Account): bigint {
    return acc.rec.balance - acc.held;
  }

  /** Current cap windows of the account, rolled forward to `now`. */
  windows(acc: Account, now: number): WindowCounters {
    return roll(acc.windows, now);
  }

  /** Places a hold if the available credit covers it. Synchronous, so atomic within the process. */
  tryHold(acc: Account, amount: bigint, now: number): boolean {
    if (this.available(acc) < amount) return false;
    acc.held += amount;
    const w = roll(acc.windows, now);
    w.hourReserved += amount;
    w.dayReserved += amount;
    w.open += amount;
    return true;
  }

  /** Releases a hold and charges `charge` (the reservation has capped it so the balance stays ≥ 0).
   *  Queues the key and the usage row. */
  settle(acc: Account, held: bigint, charge: bigint, row: UsageRow): void {
    this.#open.delete(row.requestId);
    this.committer.settled(row.requestId);
    acc.held -= held;
    const w = roll(acc.windows, row.createdAt);
    w.open -= held;
    w.hourSpent += charge;
    w.daySpent += charge;
    acc.rec.balance -= charge;
    acc.rec.spent += charge;
    // The report lists a key's rows newest first by createdAt: two settling in one millisecond are kept
    // in settlement order by moving the later one a millisecond on.
    if (row.createdAt <= acc.lastRowAt) row.createdAt = acc.lastRowAt + 1;
    acc.lastRowAt = row.createdAt;
    this.committer.key(acc.rec);
    this.committer.usage(row);
  }

  /** Registers what an open request would settle with if cut now; dropped when it settles. */
  trackOpen(requestId: string, checkpoint: () => UsageRow | undefined): void {
    this.#open.set(requestId, checkpoint);
  }

  /** Shutdown began: commit at once from now on, and checkpoint the open requests while they drain. */
  drain(): Promise<void> {
    return this.committer.drain(() => {
      const rows: UsageRow[] = [];
      for (const checkpoint of this.#open.values()) {
        const row = checkpoint();
        if (row) rows.push(row);
      }
      return rows;
    });
  }

  async close(): Promise<void> {
    this.committer.stop();
    await this.committer.flush();
  }

  #index(rec: KeyRecord): Account {
    const acc: Account = { rec, held: 0n, windows: newCounters(Date.now()), lastRowAt: 0 };
    this.#byId.set(rec.id, acc);
    this.#byHash.set(rec.hash, acc);
    return acc;
  }
}
