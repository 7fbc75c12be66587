/**
 * The persistence boundary, kept about the domain (keys, usage rows, files…) and split by capability: a small
 * interface per capability below, and Store, their union. Implemented on Deno KV (kv_store.ts) and Postgres
 * (pg_store.ts), each capability in its own module, all held to the suites in testing/ (store_contract.ts and
 * the others). Two capabilities are generic, for what a family keeps shared between processes: named JSON
 * documents (SharedDocuments) and sets whose members expire (ExpiringSets); the family names its own.
 *
 * Money is never written as a whole record: a key's `spent` and `credited` are counters that `commit` adds
 * deltas to (balance = credited − spent), so two writers of the same key both count; its metadata (state,
 * caps, membership…) is a separate record that admin operations write. Holds are not stored: the Ledger
 * (src/accounts/ledger.ts) keeps them.
 */
import type { TariffRow } from "../catalog/tariff_seed.ts";
import type { PaymentStore, ShopStore } from "./shop_store.ts";
import type { KeyOwner, LedgerEntry, Payment } from "./shop_types.ts";
import type {
  CommitBatch,
  KeyMeta,
  KeyRecord,
  LeaseTake,
  LeaseView,
  SessionRecord,
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

/** An uploaded document (spec §2.2). Times are Unix milliseconds. */
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

/** A shared JSON document (SharedDocuments): plain JSON, opaque to the store. */
export type JsonDocument = { readonly [field: string]: unknown };

/** A member of an expiring set (ExpiringSets): any JSON record with an id and its expiry (Unix ms). */
export interface SetMember {
  readonly id: string;
  readonly expiresAt: number;
}

/** One atomic change of an owner's members in a set: the `remove` ids deleted, `put` written (new or renewed). */
export interface MemberChange<M extends SetMember> {
  remove: readonly string[];
  put?: M;
}

/** Key records and their metadata (money is the ledger's: LedgerStore.commit adds to it). */
export interface KeyStore {
  /** Every key record with its money (loaded once at start-up into the account table). */
  listKeys(): Promise<KeyRecord[]>;
  getKey(id: string): Promise<KeyRecord | null>;
  /** Creates a key with its initial counters (`credited`, `spent`) and, in the same atomic step, the ledger entry
   *  of its initial credit when given; fails if the id or the hash already exists. */
  createKey(rec: KeyRecord, entry?: LedgerEntry): Promise<void>;
  /** Replaces a key's metadata (last writer wins); its money is not touched (money fields, if given, are ignored),
   *  nor its hash and hint (ShopStore.rotateKeyHash changes them). */
  updateKey(meta: KeyMeta): Promise<void>;
  /** A key by the hash of its full key (a key created by another process), or null. */
  getKeyByHash(hash: string): Promise<KeyRecord | null>;
  /**
   * Every key created or whose metadata changed at or after `since` (Unix ms, the writer's clock), with its
   * money, in any order; a key may be returned again by later calls. Changes are kept for at least an hour.
   * How processes see each other's admin changes (`src/accounts/key_refresh.ts`).
   */
  keyChanges(since: number): Promise<KeyRecord[]>;
}

/** The money of keys: the group commit, drain checkpoints and credit leases (the hot path). */
export interface LedgerStore {
  /**
   * Adds the money deltas to the keys' counters, writes usage rows, deletes settled checkpoints in the same
   * atomic operation as the money deltas, and writes the batch's drain checkpoints. Once per batch id: given a
   * batch whose id it committed before (a retry after a failure part-way or a lost reply), it applies only what
   * was not applied yet — so a failed commit is retried with the same batch, unchanged (batch_id.ts).
   */
  commit(batch: CommitBatch): Promise<void>;
  /** Drain checkpoints left by a process that was killed while draining. */
  listOpen(): Promise<UsageRow[]>;
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
}

/** Usage rows and their hourly sums (the report and the dashboard's charts). */
export interface UsageStore {
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
}

export interface TariffStore {
  /** The live tariff rows; null when never stored (the gateway then seeds it). */
  getTariff(): Promise<TariffRow[] | null>;
  /** Replaces the whole tariff in one write. */
  putTariff(rows: TariffRow[]): Promise<void>;
}

/** Uploaded documents and their quota. */
export interface FileStore {
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
}

export interface SessionStore {
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
}

/**
 * Named JSON documents shared by every process, each changed in one atomic step against every other change of
 * it. A name is a short identifier (`[a-z][a-z0-9_]*`) chosen by the caller, the same in every process.
 */
export interface SharedDocuments {
  /**
   * `change` gets the current document (null before the first change) and returns the new one (null: leave it
   * as it is) and a result, which this resolves with. `change` must be pure: an optimistic store may call it
   * again after a conflict. A document stays small: at most 60,000 bytes as JSON (else a RangeError).
   */
  updateDocument<T>(
    name: string,
    change: (doc: JsonDocument | null) => { doc: JsonDocument | null; result: T },
  ): Promise<T>;
  /**
   * Calls `onChange` soon after the document changed, by any process, so waiters wake without polling;
   * possibly also at other times (once when the watch starts or reconnects). Returns the stop function.
   * KV: `watch` for this process's writes, a versionstamp read every 100 ms for other processes'
   * (kv_documents.ts); Postgres: LISTEN/NOTIFY on a channel of the document and the store's schema
   * (pg_documents.ts).
   */
  watchDocument(name: string, onChange: () => void): () => void;
}

/**
 * Sets of members per owner (a key id) that expire on their own: a member is gone at its `expiresAt` (never
 * listed from then on, removed by the store in time). A set's name is a short identifier chosen by the caller.
 */
export interface ExpiringSets {
  /** The owner's members not expired at `now`, the first to expire first (then by id). */
  listMembers<M extends SetMember>(set: string, owner: string, now: number): Promise<M[]>;
  /** Applies one change to the owner's members in one atomic write; `now` is when the change is made. */
  updateMembers<M extends SetMember>(
    set: string,
    owner: string,
    change: MemberChange<M>,
    now: number,
  ): Promise<void>;
}

/** Per-key request counters over UTC calendar windows. */
export interface WindowCounters {
  /**
   * Counts one request of a key against its own hourly and daily limits over UTC calendar windows, atomically
   * across processes: when the count in the current hour is below `limits.hour` (null: no limit) and the
   * day's below `limits.day`, both are incremented and "ok" is returned; otherwise nothing changes and the
   * window that is full is named ("hour" checked first). `counter` names the count (the caller's name for it).
   */
  countRequest(
    keyId: string,
    counter: string,
    now: number,
    limits: { hour: number | null; day: number | null },
  ): Promise<"ok" | "hour" | "day">;
}

/** The head of a finished answer kept for replay (docs/idempotency.md). */
export interface StoredAnswerHead {
  status: number;
  /** The answer's headers as sent, in order (names lower-case). */
  headers: [string, string][];
  /** The body is an event stream (replayed from its first event) rather than one JSON document. */
  stream: boolean;
  /** The body's length in bytes. */
  bytes: number;
}

/** A keyed request's record: claimed by a process while it runs, then done with its answer. */
export interface IdempotencyRecord {
  /** SHA-256 (hex) of the request's surface, path and parsed body: a retry must match it. */
  fingerprint: string;
  state: "running" | "done";
  /** The process that claimed it (running) or finished it (done). */
  holder: string;
  /** Running: the claim holds until then unless renewed (a process that died stops renewing). Unix ms. */
  leaseUntil: number;
  /** The record and its answer are gone from then on (never returned at or after it). Unix ms. */
  expiresAt: number;
  /** Done: the answer's head (its body: idempotentBody). */
  answer?: StoredAnswerHead;
}

export type IdempotencyClaim =
  | { claimed: true }
  | { claimed: false; record: IdempotencyRecord };

/**
 * Idempotency keys per gateway key (docs/idempotency.md): claimed atomically across processes, a finished
 * answer (head and body, up to 8 MiB) kept until its expiry so a retry on any process, or after a restart,
 * replays it. `key` is up to 255 visible ASCII characters (the caller validates it). KV: kv_idempotency.ts;
 * Postgres: pg_idempotency.ts.
 */
export interface IdempotencyStore {
  /**
   * In one atomic step against every other call on the same (keyId, key): when there is no record, or it expired
   * at `now`, or it is running under a lease that ended at `now` (its holder died), writes a running record
   * (`fingerprint`, `holder`, leaseUntil = now + leaseMs, expiresAt = now + ttlMs) and answers claimed;
   * otherwise answers the record as stored, writing nothing.
   */
  claimIdempotency(
    keyId: string,
    key: string,
    claim: { fingerprint: string; holder: string; now: number; leaseMs: number; ttlMs: number },
  ): Promise<IdempotencyClaim>;
  /** The record not expired at `now`, or null. */
  getIdempotency(keyId: string, key: string, now: number): Promise<IdempotencyRecord | null>;
  /** Extends the holder's running claim to now + leaseMs; false (nothing written) when it is not the holder's
   *  running record any more, or the record expired at `now`. A lease that ended but was not claimed by another
   *  holder yet is extended: the holder still runs the request. */
  renewIdempotency(
    keyId: string,
    key: string,
    holder: string,
    now: number,
    leaseMs: number,
  ): Promise<boolean>;
  /**
   * The holder's running record becomes done with `head` and `body` (head.bytes === body.length, else
   * RangeError), kept until `expiresAt`; the body is visible only once the record says done (written first, in
   * chunks on KV). False (nothing visible written) when it is not the holder's running record any more.
   */
  finishIdempotency(
    keyId: string,
    key: string,
    holder: string,
    answer: { head: StoredAnswerHead; body: Uint8Array; expiresAt: number },
  ): Promise<boolean>;
  /** The body of the done record not expired at `now`, or null. */
  idempotentBody(keyId: string, key: string, now: number): Promise<Uint8Array | null>;
  /** Deletes the holder's running record (the request was refused: nothing is kept); nothing otherwise. */
  releaseIdempotency(keyId: string, key: string, holder: string): Promise<void>;
}

/** What a backup reads (src/backup/snapshot.ts): every record of money and identity. */
export type SnapshotReads = Pick<
  Store,
  | "listKeys"
  | "listLedger"
  | "listUsage"
  | "usageHours"
  | "getTariff"
  | "listFiles"
  | "getFileData"
  | "getFileSections"
  | "listPackages"
  | "listPaymentMethods"
  | "listPayments"
  | "listKeyOwners"
>;

/**
 * Backup and restore (docs/backup.md). A snapshot is read as one moment of the store; a restore writes into an
 * empty store the records a snapshot read, through the other capabilities where they write a record as it was
 * (createKey, commit, createPackage, updatePaymentMethod, putFile, putTariff) and through the three writers
 * below where they do not.
 */
export interface BackupStore {
  /**
   * Runs `read` over one consistent view: every read sees the same moment, so a key's counters, its ledger
   * entries and its usage rows agree. Postgres: one read-only repeatable-read transaction, whatever other
   * processes write. KV: this process's writes of money and identity (commit, keys, the shop's steps, files,
   * the tariff) wait until `read` ends; another process sharing a `kv:` store is not held (docs/backup.md).
   */
  readSnapshot<T>(read: (view: SnapshotReads) => Promise<T>): Promise<T>;
  /** True when the store holds no key, usage row, ledger entry, package, payment, key owner or file (the seeded
   *  tariff and payment methods do not count): what a restore needs. */
  isEmptyForRestore(): Promise<boolean>;
  /** Writes ledger entries as they were, moving no money (a restored key's counters already hold it). */
  restoreLedgerEntries(entries: readonly LedgerEntry[]): Promise<void>;
  /** Writes payments as they were, with their indexes and their recorded charge ids. */
  restorePayments(payments: readonly Payment[]): Promise<void>;
  /** Writes key owners as they were, with the index by chat. */
  restoreKeyOwners(owners: readonly KeyOwner[]): Promise<void>;
}

/**
 * The whole store: the union of its capabilities. A backend composes one object per capability
 * (kv_store.ts, pg_store.ts), each in its own module; a caller that needs one capability takes its interface.
 */
export type Store =
  & KeyStore
  & LedgerStore
  & UsageStore
  & TariffStore
  & FileStore
  & SessionStore
  & ShopStore
  & PaymentStore
  & SharedDocuments
  & ExpiringSets
  & WindowCounters
  & IdempotencyStore
  & BackupStore
  & {
    /** Ends the store's connections (and releases the KV file's lock, open.ts). */
    close(): Promise<void>;
  };
