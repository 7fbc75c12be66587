/** One key as the gateway holds it: its record and the ledger's view of its money. */
import type { KeyRecord, UsageRow } from "../store/types.ts";
import { newCounters, roll, type WindowCounters } from "./windows.ts";

export interface Account {
  /** Metadata and money (balance = credited − spent); money fields change only through the Ledger. */
  rec: KeyRecord;
  /** Sum of open holds, pico-USD. */
  held: bigint;
  /** Spend and reserve in the current hour and day, for the key's own caps. */
  windows: WindowCounters;
  /** createdAt of the key's newest usage row written by this process (rows are keyed newest first). */
  lastRowAt: number;
}

export function newAccount(rec: KeyRecord, now = Date.now()): Account {
  return { rec, held: 0n, windows: newCounters(now), lastRowAt: 0 };
}

/** A hold's in-memory side, the same in both ledgers: held credit and the reserve in the key's windows. */
export function addHold(acc: Account, amount: bigint, now: number): void {
  acc.held += amount;
  const w = roll(acc.windows, now);
  w.hourReserved += amount;
  w.dayReserved += amount;
  w.open += amount;
}

/** A settlement's in-memory side, the same in both ledgers: the hold released, the charge spent. */
export function settleHold(acc: Account, held: bigint, charge: bigint, row: UsageRow): void {
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
}
