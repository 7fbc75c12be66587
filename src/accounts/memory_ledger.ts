/**
 * The Ledger of one process that is the only writer of its store: balances, holds and windows live in
 * memory, so a hold takes no store round trip (its promise is already settled), and settlements become
 * durable by group commit as money deltas (credits and debits are the store's own atomic steps, which the
 * view follows: ledger.ts applyCredit, debit). Holds are never persisted: a crashed process releases them
 * by construction (spec §8.1 p.2–4).
 */
import { GatewayError } from "../errors/gateway_error.ts";
import type { Store } from "../store/store.ts";
import type { UsageRow } from "../store/types.ts";
import { type Account, addHold, settleHold } from "./account.ts";
import { checkCaps } from "./caps.ts";
import { batchIds, type CommitStats, GroupCommitter } from "./group_commit.ts";
import type { DebitOutcome, HoldRequest, Ledger, OpenCheckpoint } from "./ledger.ts";
import { EntryList } from "../util/entry_list.ts";
import type { Logger } from "../util/log.ts";
import { roll, type WindowCounters } from "./windows.ts";

const DONE: Promise<void> = Promise.resolve();

export class MemoryLedger implements Ledger {
  readonly #committer: GroupCommitter;
  /**
   * Requests that can tell what they would settle with if cut now (open streams), for drain checkpoints. An
   * EntryList, not a Map by request id: every stream comes and goes (util/entry_list.ts).
   */
  readonly #open = new EntryList<() => UsageRow | undefined>();
  /** Ids of the batches `recover` commits itself. */
  readonly #batchId = batchIds();

  constructor(private readonly store: Store, log: Logger, commitIntervalMs = 5) {
    this.#committer = new GroupCommitter(store, commitIntervalMs, log);
  }

  available(acc: Account): bigint {
    return acc.rec.balance - acc.held;
  }

  spareCredit(acc: Account): bigint {
    return this.available(acc);
  }

  windows(acc: Account, now: number): WindowCounters {
    return roll(acc.windows, now);
  }

  hold(acc: Account, req: HoldRequest): Promise<void> {
    try {
      this.#hold(acc, req);
      return DONE;
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** Synchronous from the credit check to the hold: nothing can interleave within the process. */
  #hold(acc: Account, { amount, capCodes, now }: HoldRequest): void {
    const available = this.available(acc);
    if (available <= 0n) throw new GatewayError("insufficient_credit");
    if (available < amount) throw new GatewayError("request_reserve_exceeds_credit");
    checkCaps(acc.rec.caps, roll(acc.windows, now), amount, capCodes, now);
    addHold(acc, amount, now);
  }

  settle(acc: Account, held: bigint, charge: bigint, row: UsageRow, open?: OpenCheckpoint): void {
    if (open) this.#open.remove(open);
    this.#committer.settled(row.requestId);
    settleHold(acc, held, charge, row);
    if (charge > 0n) this.#committer.money(acc.rec.id, charge, 0n);
    this.#committer.usage(row);
  }

  applyCredit(acc: Account, amount: bigint): void {
    acc.rec.balance += amount;
    acc.rec.credited += amount;
  }

  /** The store's counters add this process's settlements only at the next group commit, and know nothing of
   *  its holds: the check is here, in memory, and the amount is held back (as a hold, without the cap
   *  windows) until the store step ends. */
  async debit(acc: Account, amount: bigint, write: () => Promise<DebitOutcome>): Promise<DebitOutcome> {
    if (this.available(acc) < amount) return "insufficient";
    acc.held += amount;
    let outcome: DebitOutcome;
    try {
      outcome = await write();
    } finally {
      acc.held -= amount;
    }
    if (outcome === "debited") {
      acc.rec.balance -= amount;
      acc.rec.credited -= amount;
    }
    return outcome;
  }

  /**
   * Requests a killed process was still streaming while it drained: each is charged what its last
   * checkpoint says (an estimate, already capped at its hold), never more than the balance, and its
   * checkpoint is deleted in the same atomic write as the charge — so a restart cannot charge twice.
   */
  async recover(find: (keyId: string) => Account | undefined): Promise<void> {
    for (const row of await this.store.listOpen()) {
      const acc = find(row.keyId);
      if (!acc) {
        await this.store.commit({ id: this.#batchId(), money: [], usage: [], closed: [row.requestId] });
        continue;
      }
      const free = acc.rec.balance > 0n ? acc.rec.balance : 0n;
      const charge = row.charged < free ? row.charged : free;
      const settled = { ...row, charged: charge, writtenOff: row.writtenOff + row.charged - charge };
      await this.store.commit({
        id: this.#batchId(),
        money: [{ keyId: acc.rec.id, spent: charge, credited: 0n }],
        usage: [settled],
        closed: [row.requestId],
      });
      acc.rec.balance -= charge;
      acc.rec.spent += charge;
    }
  }

  trackOpen(checkpoint: () => UsageRow | undefined): OpenCheckpoint {
    return this.#open.add(checkpoint);
  }

  flush(): Promise<void> {
    return this.#committer.flush();
  }

  drain(): Promise<void> {
    return this.#committer.drain(() => {
      const rows: UsageRow[] = [];
      this.#open.forEach((checkpoint) => {
        const row = checkpoint();
        if (row) rows.push(row);
      });
      return rows;
    });
  }

  async close(): Promise<void> {
    this.#committer.stop();
    await this.#committer.flush();
  }

  stats(): CommitStats {
    return this.#committer.stats();
  }

  get failures(): number {
    return this.#committer.failures;
  }
}
