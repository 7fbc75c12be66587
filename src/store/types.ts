/** Domain records the Store keeps. Money fields are pico-USD bigints (src/money/usd.ts). */
import type { Family } from "../catalog/models.ts";
import type { FamilySettings } from "./family_settings.ts";

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
  /** Per-family settings (paused, request limits), kept as data: a family with no entry has the defaults. */
  families: FamilySettings;
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
  /** Set by a lease ledger (docs/ledger_leases.md): the same atomic write moves its lease and the windows. */
  lease?: LeaseDelta;
}

/**
 * What a lease ledger's settlements and give-backs change besides the counters, in the same atomic write:
 * the holder's lease of the key shrinks by `spent + returned` (floored at 0; a lease that no longer exists
 * stays absent), and the key's shared windows, rolled to the batch's `at`, add `spent` to the hour and day
 * spend and `reserved` to the hour and day reserve.
 */
export interface LeaseDelta {
  holder: string;
  /** Credit given back from the lease to the key's available credit (≥ 0). */
  returned: bigint;
  /** Reserves of settled holds that no take counted yet (≥ 0). */
  reserved: bigint;
}

/** A key's shared spend and reserve over the current UTC hour and day (for caps across processes). */
export interface SharedWindow {
  /** Start of the hour and of the day the sums belong to (Unix ms); sums of older windows read as zero. */
  hourStart: number;
  dayStart: number;
  hourSpent: bigint;
  daySpent: bigint;
  hourReserved: bigint;
  dayReserved: bigint;
}

/** A key's shared money as one atomic read sees it at `now`. */
export interface LeaseView {
  credited: bigint;
  spent: bigint;
  /** Σ of every holder's live lease (expiresAt > now), this holder's included. */
  leased: bigint;
  /** This holder's live lease (0 when it has none or it expired). */
  mine: bigint;
  /** Rolled to `now`: a window that ended reads as the current one with zero sums. */
  window: SharedWindow;
}

/** What a take decides from the view: credit added to the holder's lease, reserve added to the windows. */
export interface LeaseDecision {
  grant: bigint;
  reserved: bigint;
}

export interface LeaseTake {
  keyId: string;
  holder: string;
  /** Unix ms: expiry is judged against it and the taken lease lives until now + ttlMs. */
  now: number;
  ttlMs: number;
  /**
   * Decides from the view; pure, since an optimistic store may call it again after a conflict. May throw
   * (the error propagates and nothing is written). The store refuses (RangeError) a grant or reserve below 0
   * or a positive grant above `credited − spent − leased` (which settlements of expired leases can take below
   * zero). A lease that reaches 0 no longer exists. `caps` are the key's caps as stored, read in the same
   * atomic step (a cap set after it makes the take read again or wait for it), so a process that has not read
   * a new cap through its key refresh yet still decides every take with it (docs/ledger_leases.md).
   */
  decide(view: LeaseView, caps: Caps): LeaseDecision;
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
  /** The model that answered when another than the requested `model` did (a fallback model, spec §4.7). */
  servedModel?: string;
  /** Whether usage came from the upstream or was estimated from delivered frames. */
  usageSource: "upstream" | "estimated";
  /** Rates applied, pico-USD per token (and per search). */
  rates: { input: bigint; cacheRead: bigint; output: bigint; search: bigint };
}

/**
 * A key's usage summed over one UTC clock hour for one family and model (Store.usageHours): kept by the store
 * in the same atomic write as the usage rows it counts, so reading it never scans rows.
 */
export interface UsageHour {
  /** Start of the UTC hour (Unix ms) holding the rows' `createdAt`. */
  hour: number;
  family: Family;
  /** The rows' `model` (the requested id, not `servedModel`). */
  model: string;
  /** Usage rows counted, whatever their status. */
  requests: number;
  /** Σ charged, pico-USD. */
  charged: bigint;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
}

/**
 * A sign-in to the key holder's dashboard (src/auth/session.ts), stored under the SHA-256 of its id: the id
 * itself lives only in the browser's cookie, so a copy of the store cannot sign anyone in.
 */
export interface SessionRecord {
  /** SHA-256 (hex) of the session id. */
  hash: string;
  keyId: string;
  /** SHA-256 (hex) of the key it signed in with: a rotated key's sessions end (src/auth/session.ts). */
  keyHash: string;
  /** Unix ms. */
  createdAt: number;
  /** Unix ms: from then on the session is gone. */
  expiresAt: number;
}

/** What the group committer writes in one atomic operation. */
export interface CommitBatch {
  /**
   * Names the batch (at most MAX_BATCH_ID characters, unique per batch: group_commit.ts batchIds). A commit
   * given an id already committed applies nothing of it again, whole or the parts that were (a retry after a
   * failure part-way or a lost reply): the store remembers ids for a day (BATCH_ID_TTL_MS).
   */
  id: string;
  /** Added to the keys' spent/credited counters (atomic sums: two writers never lose each other's). */
  money: MoneyDelta[];
  usage: UsageRow[];
  /**
   * Drain checkpoints: the usage row each request still streaming would settle with if it were cut now.
   * A process killed while draining settles them at its next start (docs/billing.md "The ledger and its durability promise").
   */
  open?: UsageRow[];
  /** Request ids whose checkpoint is settled now: deleted together with the money deltas. */
  closed?: string[];
  /** Unix ms the shared windows are rolled to; required when a money delta carries a `lease`. */
  at?: number;
}
