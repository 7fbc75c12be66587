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
  /** Settled credit: initial + top-ups − settled spend. Open holds live in the ledger, not here. */
  balance: bigint;
  /** Everything ever credited (initial balance + top-ups), for the ledger identity. */
  credited: bigint;
  spent: bigint;
  caps: Caps;
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
  keys: KeyRecord[];
  usage: UsageRow[];
  /**
   * Drain checkpoints: the usage row each request still streaming would settle with if it were cut now.
   * A process killed while draining settles them at its next start (README, durability promise).
   */
  open?: UsageRow[];
  /** Request ids whose checkpoint is settled now: deleted together with the key records. */
  closed?: string[];
}
