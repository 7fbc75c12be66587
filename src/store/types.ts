/** Domain records the Store keeps. Money fields are pico-USD bigints (src/money/usd.ts). */
import type { Family } from "../catalog/models.ts";

export interface Caps {
  hourlySpend: bigint | null;
  dailySpend: bigint | null;
  hourlyReserve: bigint | null;
  dailyReserve: bigint | null;
}

export interface KeyRecord {
  id: string;
  /** SHA-256 (hex) of the full key; the key itself is never stored. */
  hash: string;
  /** First characters of the key, for operators to recognise it. */
  hint: string;
  name: string | null;
  createdAt: number;
  revoked: boolean;
  expiresAt: number | null;
  suspendedUntil: number | null;
  thetaPaused: boolean;
  membership: "private" | null;
  /** Settled credit: initial + top-ups − settled spend. Open holds live in the ledger, not here.
   *  Never stored: the store keeps `credited` and `spent` as counters and derives it. */
  balance: bigint;
  /** Everything ever credited (initial balance + top-ups), for the ledger identity. */
  credited: bigint;
  spent: bigint;
  caps: Caps;
}

/** The money of a key, moved only by the ledger (as deltas, never as a whole record). */
export type KeyMoney = Pick<KeyRecord, "balance" | "credited" | "spent">;
/** What admin operations change: everything but the money. Stored as one record per key. */
export type KeyMeta = Omit<KeyRecord, keyof KeyMoney>;

/** Money moved on one key since the last commit: added to the key's counters, never set. */
export interface MoneyDelta {
  keyId: string;
  /** Settled charges (≥ 0). */
  spent: bigint;
  /** Top-ups (≥ 0). */
  credited: bigint;
}

export interface UsageRow {
  requestId: string;
  keyId: string;
  family: Family;
  model: string;
  endpoint: string;
  stream: boolean;
  status: "ok" | "error" | "cancelled";
  createdAt: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  webSearchRequests: number;
  /** The search fee priced for them (spec §8.1 p.6); rows written before it existed have none. */
  searchFee?: bigint;
  reserved: bigint;
  charged: bigint;
  /** What usage priced beyond what could be charged without a negative balance: the operator's loss. */
  writtenOff: bigint;
  /** Whether usage came from the upstream or was estimated from delivered frames. */
  usageSource: "upstream" | "estimated";
  /** Rates applied, pico-USD per token (and per search). */
  rates: { input: bigint; cacheRead: bigint; output: bigint; search: bigint };
}

/** What the group committer writes in one atomic operation. */
export interface CommitBatch {
  /** Added to the keys' spent/credited counters (atomic sums: two writers never lose each other's). */
  money: MoneyDelta[];
  usage: UsageRow[];
  /**
   * Drain checkpoints: the usage row each request still streaming would settle with if it were cut now.
   * A process killed while draining settles them at its next start (README, durability promise).
   */
  open?: UsageRow[];
  /** Request ids whose checkpoint is settled now: deleted together with the money deltas. */
  closed?: string[];
}
