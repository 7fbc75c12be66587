/**
 * The persistence boundary. Kept about the domain (keys, usage rows): implemented on Deno KV (kv_store.ts)
 * and Postgres (pg_store.ts), both held to one contract (store_contract.ts). Money is never written as a whole record: a key's `spent` and
 * `credited` are counters that `commit` adds deltas to (balance = credited − spent), so two writers of
 * the same key both count; its metadata (state, caps, membership…) is a separate record that admin
 * operations write. Holds are not stored: the Ledger (src/accounts/ledger.ts) keeps them.
 */
import type { TariffRow } from "../catalog/tariff_seed.ts";
import type { ShopStore } from "./shop_store.ts";
import type { LedgerEntry } from "./shop_types.ts";
import type {
  CommitBatch,
  KeyMeta,
  KeyRecord,
  LeaseTake,
  LeaseView,
  SessionRecord,
  ThetaPoolDoc,
  UsageHour,
  UsageRow,
} from "./types.ts";

export interface UsagePage {
  rows: UsageRow[];
  /** Opaque continuation just past each row (same length as `rows`), so a reader that stops
   *  mid-page can resume exactly there; a position, not an offset, so newer rows never shift it. */
  cursors: string[];
  /** Opaque continuation, absent on the last page. */
  next?: string;
}

/** An uploaded document of family alpha (spec §2.2). Times are Unix milliseconds. */
export interface StoredFile {
  id: string;
  keyId: string;
  filename: string;
  purpose: string;
  contentType: string;
  /** Size of the original file. */
  bytes: number;
  createdAt: number;
  expiresAt: number;
  /** What the quota counts: original bytes + the serialized extracted sections. */
  storedBytes: number;
}

/** One extracted piece of a document with its anchor (spec §2.3). */
export interface FileSection {
  text: string;
  anchor: string;
}

export interface FileQuota {
  maxFiles: number;
  maxBytes: number;
}

export type PutFileResult = "ok" | "quota_exceeded";

/**
 * An unfinished client tool loop of families gamma and eta (spec §7.5): the last answer of a conversation ended
 * waiting for the client's results of these tool calls. Times are Unix milliseconds.
 */
export interface ToolLoop {
  keyId: string;
  /** Stable for the loop's life: the id of the request whose answer opened it. */
  id: string;
  /** The tool calls of the loop's last answer, whose results continue it. */
  callIds: string[];
  /** When the loop's last answer ended. */
  updatedAt: number;
  /** When the loop is gone unless continued (the store removes it then). */
  expiresAt: number;
}

/** One atomic change of a key's tool loops: the `close` ids deleted, `open` written (a new or renewed loop). */
export interface ToolLoopChange {
  close: string[];
  open?: ToolLoop;
}

/** Beside its own methods, the key shop's (shop_store.ts). */
export interface Store extends ShopStore {
  /** Every key record with its money (loaded once at start-up into the account table). */
  listKeys(): Promise<KeyRecord[]>;
  getKey(id: string): Promise<KeyRecord | null>;
  /** Creates a key with its initial counters (`credited`, `spent`) and, in the same atomic step, the ledger entry
   *  of its initial credit when given; fails if the id or the hash already exists. */
  createKey(rec: KeyRecord, entry?: LedgerEntry): Promise<void>;
  /** Replaces a key's metadata (last writer wins); its money is not touched (money fields, if given, are ignored),
   *  nor its hash and hint (ShopStore.rotateKeyHash changes them). */
  updateKey(meta: KeyMeta): Promise<void>;
  /**
   * Adds the money deltas to the keys' counters, writes usage rows, deletes settled checkpoints in the same
   * atomic operation as the money deltas, and writes the batch's drain checkpoints. Once per batch id: given a
   * batch whose id it committed before (a retry after a failure part-way or a lost reply), it applies only what
   * was not applied yet — so a failed commit is retried with the same batch, unchanged (batch_id.ts).
   */
  commit(batch: CommitBatch): Promise<void>;
  /** Drain checkpoints left by a process that was killed while draining. */
  listOpen(): Promise<UsageRow[]>;
  /** Usage rows of one key, newest first. `after` is a continuation from a previous page. */
  listUsage(keyId: string, opts: { limit: number; after?: string }): Promise<UsagePage>;
  /**
   * A key's hourly usage sums (the dashboard's charts): one entry per (hour, family, model) with at
   * least one row, for the hours whose start is in [fromMs, toMs) — with hour-aligned bounds, exactly the
   * rows whose `createdAt` is in [fromMs, toMs). Sorted by hour, then family, then model (by bytes). The sums
   * are kept by `commit` in the same atomic write as the rows and read as one index range, never by scanning
   * rows; a row counts once per commit that writes it, as its money does.
   */
  usageHours(keyId: string, fromMs: number, toMs: number): Promise<UsageHour[]>;
  /** The live tariff rows; null when never stored (the gateway then seeds it). */
  getTariff(): Promise<TariffRow[] | null>;
  /** Replaces the whole tariff in one write. */
  putTariff(rows: TariffRow[]): Promise<void>;
  /**
   * Stores a file (original bytes + its extracted sections, already serialised as the JSON of a
   * FileSection[] — serialised once by the caller, never twice on the event loop) if the key's quota
   * allows it; the quota is checked and taken atomically. The file becomes visible only once everything
   * is written, and is removed automatically at `file.expiresAt`.
   */
  putFile(
    file: StoredFile,
    data: Uint8Array,
    sectionsJson: Uint8Array,
    quota: FileQuota,
  ): Promise<PutFileResult>;
  /** A key's file, or null when unknown, another key's, or expired at `now`. */
  getFile(keyId: string, id: string, now: number): Promise<StoredFile | null>;
  /** A key's live files, oldest first; expired ones found on the way are swept. */
  listFiles(keyId: string, now: number): Promise<StoredFile[]>;
  getFileData(file: StoredFile): Promise<Uint8Array>;
  getFileSections(file: StoredFile): Promise<FileSection[]>;
  /** Deletes a key's file and returns its quota; false when there was none. */
  deleteFile(keyId: string, id: string): Promise<boolean>;
  /** A key's tool loops not expired at `now`, the first to expire first. */
  listToolLoops(keyId: string, now: number): Promise<ToolLoop[]>;
  /** Applies one change to a key's tool loops in one atomic write; a written loop is removed at its `expiresAt`. */
  updateToolLoops(keyId: string, change: ToolLoopChange): Promise<void>;
  /** A key by the hash of its full key (a key created by another process), or null. */
  getKeyByHash(hash: string): Promise<KeyRecord | null>;
  /**
   * Every key created or whose metadata changed at or after `since` (Unix ms, the writer's clock), with its
   * money, in any order; a key may be returned again by later calls. Changes are kept for at least an hour.
   * How processes see each other's admin changes (`src/accounts/key_refresh.ts`).
   */
  keyChanges(since: number): Promise<KeyRecord[]>;

  /**
   * Credit leases (docs/ledger_leases.md). In one atomic step against every other take, commit and renewal
   * of the key: reads the key's view at `take.now` (expired leases count for nothing and may be deleted),
   * calls `take.decide`, and unless it decided zero for both: sets the holder's lease to `mine + grant` and its
   * expiry to `now + ttlMs`, and adds `reserved` to the windows rolled to `now`. Resolves with the view
   * the decision saw and the grant. Unknown key: rejects.
   */
  takeLease(take: LeaseTake): Promise<{ view: LeaseView; grant: bigint }>;
  /** The key's view for `holder` at `now`, written nothing (the admin view's `leased_usd`). Unknown key: null. */
  leaseView(keyId: string, holder: string, now: number): Promise<LeaseView | null>;
  /**
   * Extends to `now + ttlMs` the holder's leases on `keyIds` that are still live at `now` (an expired lease
   * is never revived: its credit may be another holder's by now). Resolves with the key ids renewed.
   */
  renewLeases(holder: string, keyIds: readonly string[], now: number, ttlMs: number): Promise<string[]>;

  /**
   * The theta account pool (family theta, spec §4.7; src/families/theta/): one JSON document shared by every
   * process, changed in one atomic step against every other change. `change` gets the current document
   * (null before the first change) and returns the new one (null: leave it as it is) and a result, which this
   * resolves with. `change` must be pure: an optimistic store may call it again after a conflict. The
   * document stays small (the pool bounds its queue): at most 60,000 bytes as JSON.
   */
  updateThetaPool<T>(
    change: (doc: ThetaPoolDoc | null) => { doc: ThetaPoolDoc | null; result: T },
  ): Promise<T>;
  /**
   * Calls `onChange` soon after the pool document changed, by any process, so waiters wake without polling;
   * possibly also at other times (once when the watch starts or reconnects). Returns the stop function.
   * KV: `watch` for this process's writes, a versionstamp read every 100 ms for other processes' (kv_theta.ts);
   * Postgres: LISTEN/NOTIFY on a channel of the store's schema (pg_theta.ts).
   */
  watchThetaPool(onChange: () => void): () => void;
  /**
   * Counts one request of a key against its own hourly and daily limits over UTC calendar windows, atomically
   * across processes: when the count in the current hour is below `limits.hour` (null: no limit) and the
   * day's below `limits.day`, both are incremented and "ok" is returned; otherwise nothing changes and the
   * window that is full is named ("hour" checked first). `counter` names the count (theta: "theta").
   */
  countRequest(
    keyId: string,
    counter: string,
    now: number,
    limits: { hour: number | null; day: number | null },
  ): Promise<"ok" | "hour" | "day">;

  /**
   * Dashboard sessions (src/auth/session.ts), shared by every process on the store, so a sign-in works on any
   * of them and a sign-out ends it on all. Written once at sign-in; gone at `expiresAt` (never returned from
   * then on, removed by the store in time) or when deleted.
   */
  putSession(session: SessionRecord): Promise<void>;
  /** The session stored under `hash`, or null when there is none or it expired at `now`. */
  getSession(hash: string, now: number): Promise<SessionRecord | null>;
  /** Removes the session stored under `hash` (sign-out); nothing when there is none. */
  deleteSession(hash: string): Promise<void>;

  /** Ends the store's connections (and releases the KV file's lock, open.ts). */
  close(): Promise<void>;
}
