/** A key's ledger entry (store/shop_types.ts LedgerEntry), made where the money step that writes it is. */
import type { LedgerEntry } from "../store/shop_types.ts";
import { idGenerator } from "../util/ids.ts";

/** A ledger lists a key's entries by time, then id: within a millisecond, in this process's order of making. */
const entryIds = idGenerator();

/** `reference`: "initial", "admin:topup", "payment:<id>", "refund:<payment id>". */
export function ledgerEntry(
  keyId: string,
  kind: LedgerEntry["kind"],
  amountUsd: bigint,
  reference: string,
  createdAt: number,
): LedgerEntry {
  return { id: entryIds("le_"), keyId, kind, amountUsd, reference, createdAt };
}
