/**
 * The money operations of the gateway, apart from the key table (accounts.ts): available credit, the hold
 * (credit check + cap windows + placing it, one atomic step), settlement, credits and debits, the hour/day
 * windows, and durability. `MemoryLedger` (memory_ledger.ts) is today's implementation: one process owns the money in
 * memory and makes it durable by group commit. A shared-store implementation, where several processes hold
 * credit of the same key at once, implements the same interface; so the steps it must make atomic against
 * the store (`hold`, `debit`, `recover`) return promises, which the in-memory one resolves at once.
 *
 * Settlements reach the store as deltas (spent), never as a whole record (store/store.ts); a credit or a debit
 * is the store's own atomic step with its ledger entry (`applyCredit`, `debit`), which the view follows.
 */
import type { UsageRow } from "../store/types.ts";
import type { ListEntry } from "../util/entry_list.ts";
import type { Account } from "./account.ts";
import type { CapCodes } from "./caps.ts";
import type { CommitStats } from "./group_commit.ts";
import type { WindowCounters } from "./windows.ts";

/** An open request's drain checkpoint, registered (Ledger.trackOpen) until its settlement drops it. */
export type OpenCheckpoint = ListEntry<() => UsageRow | undefined>;

export interface HoldRequest {
  /** The reserve, pico-USD. */
  amount: bigint;
  /** The family's codes for the key's caps. */
  capCodes: CapCodes;
  /** The clock for the cap windows (Unix ms). */
  now: number;
}

/** What a debit's store step did: debited, refused for credit, or wrote nothing for another reason. */
export type DebitOutcome = "debited" | "insufficient" | "unchanged";

export interface Ledger {
  /** Credit free for a new hold: settled balance minus open holds. A shared ledger answers from its
   *  latest view (exact for the holds this process placed); used for pre-checks and the key views. */
  available(acc: Account): bigint;

  /** Credit a settlement may charge beyond its own hold without a negative balance (the settlement ceiling):
   *  credit no other hold covers. A leasing ledger counts only the credit its lease holds. */
  spareCredit(acc: Account): bigint;

  /** The key's cap windows, rolled forward to `now`. */
  windows(acc: Account, now: number): WindowCounters;

  /**
   * Places a hold of `req.amount`, in one atomic step with its checks, in this order: available credit zero
   * → `insufficient_credit`; below the amount → `request_reserve_exceeds_credit`; a cap it would cross →
   * that cap's code from `req.capCodes` (with Retry-After). Rejects with the GatewayError; a refused hold
   * changes nothing.
   */
  hold(acc: Account, req: HoldRequest): Promise<void>;

  /**
   * Releases a hold of `held` and charges `charge` (capped by the caller at the hold plus the credit no other
   * hold covers, so the balance stays ≥ 0), and records the usage row. A release is a settle with a zero
   * charge. Takes effect at once; durable by `flush` (group commit). Drops `open`, the request's drain
   * checkpoint (`trackOpen`), when given.
   */
  settle(acc: Account, held: bigint, charge: bigint, row: UsageRow, open?: OpenCheckpoint): void;

  /**
   * A credit the store already holds, applied to this process's view of the key. Credits (an operator top-up,
   * a shop payment) are written by the store in one atomic step with their ledger entry (Store.creditKey,
   * settlePayment): the step is the source of truth, and the view follows it here, so no second credit delta
   * ever reaches the store. Called once per step, after it resolved.
   */
  applyCredit(acc: Account, amount: bigint): void;

  /**
   * A debit (a shop refund) written by `write`, the store's atomic step that checks the key's free credit in
   * the store and records the debit with its ledger entry (Store.refundPayment). Before it, this ledger makes
   * the store's check enough: the in-memory ledger refuses ("insufficient", `write` not called) unless its
   * available credit covers `amount`, and keeps that much from new holds while `write` runs; the leasing
   * ledger gives back its unused lease of the key first. When `write` debited, the view follows.
   */
  debit(acc: Account, amount: bigint, write: () => Promise<DebitOutcome>): Promise<DebitOutcome>;

  /** At start-up: settles the drain checkpoints a killed process left (never above the balance), each
   *  deleted atomically with its charge. `find` resolves a key id to its account. */
  recover(find: (keyId: string) => Account | undefined): Promise<void>;

  /** Registers what an open request would settle with if cut now (a drain checkpoint); dropped on settle. */
  trackOpen(checkpoint: () => UsageRow | undefined): OpenCheckpoint;

  /** Resolves when every change made before the call is durable, or when a commit of it failed. */
  flush(): Promise<void>;
  /** Shutdown began: durable at once from now on, and the open requests checkpointed while they drain. */
  drain(): Promise<void>;
  /**
   * Stops background work, gives back credit leased from a shared store (the shutdown's "return leased
   * credit" step, src/http/shutdown.ts), and flushes.
   */
  close(): Promise<void>;
  /** Commit rounds and their lag (`GET /admin/ledger`, the bench). */
  stats(): CommitStats;
  /** Commits that failed (and were retried). */
  readonly failures: number;
}
