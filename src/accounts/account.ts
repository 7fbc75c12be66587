/** One key as the gateway holds it: its record and the ledger's view of its money. */
import type { KeyRecord } from "../store/types.ts";
import { newCounters, type WindowCounters } from "./windows.ts";

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
