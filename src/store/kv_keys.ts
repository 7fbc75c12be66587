/** Every Deno KV key shape the store uses, in one place. */
import { checkName } from "./json_document.ts";

/** The first key parts of the store's own records: a document or set name (the caller's) may be none of them. */
const OWN_PARTS = [
  "key",
  "key_money",
  "key_by_hash",
  "key_ledger",
  "key_change",
  "usage",
  "usage_hour",
  "usage_hours_ready",
  "store_format",
  "commit_done",
  "open",
  "tariff",
  "file",
  "file_chunk",
  "file_quota",
  "dashboard_session",
  "request_count",
  "shop_package",
  "payment_method",
  "payment",
  "payment_by_time",
  "payment_by_status",
  "payment_by_chat",
  "payment_charge",
  "ledger_entry",
  "key_owner",
  "chat_key",
  "bot_update",
  "idempotency",
  "idempotency_body",
] as const;

/** `name` as a document's or set's first key part; throws for a malformed name or one of the store's own. */
export function callerPart(name: string): string {
  checkName(name);
  if ((OWN_PARTS as readonly string[]).includes(name)) {
    throw new Error(`reserved document or set name: ${name}`);
  }
  return name;
}

export const kvKeys = {
  key: (id: string) => ["key", id] as const,
  keyPrefix: () => ["key"] as const,
  /** A key's money counter ("spent" or "credited") is the sum of its limbs: limb n holds a KvU64 worth
   *  value·2^(32n). Writers add each 32-bit piece of a delta to its limb with KV's atomic `sum`, so no
   *  carry between limbs is ever needed (a limb wraps only after 2^32 maximal pieces). */
  money: (id: string, counter: "spent" | "credited", limb: number) =>
    ["key_money", id, counter, limb] as const,
  moneyPrefix: () => ["key_money"] as const,
  keyByHash: (hash: string) => ["key_by_hash", hash] as const,
  /** A key's lease book (kv_leases.ts): every holder's lease and the shared windows, in one value. */
  keyLedger: (id: string) => ["key_ledger", id] as const,
  /** A key created or whose metadata changed at `changedAt` (the writer's clock), for `keyChanges`;
   *  written with the metadata, expires after a little more than the hour the Store keeps changes. */
  keyChange: (changedAt: number, id: string) => ["key_change", changedAt, id] as const,
  keyChangePrefix: () => ["key_change"] as const,
  /** Usage rows sort newest first: inverted time, then request id. */
  usage: (keyId: string, createdAt: number, requestId: string) =>
    ["usage", keyId, Number.MAX_SAFE_INTEGER - createdAt, requestId] as const,
  /** A usage entry of rows (kv_usage_entries.ts), keyed by its first row as `usage` keys a row, then by the
   *  batch that wrote it: no commit replaces an entry another wrote, whatever rows they share. */
  usageEntry: (keyId: string, createdAt: number, requestId: string, batchId: string) =>
    ["usage", keyId, Number.MAX_SAFE_INTEGER - createdAt, requestId, batchId] as const,
  /** The time and request id a usage entry's key names (its first row's). */
  usagePlace: (key: Deno.KvKey) => ({
    createdAt: Number.MAX_SAFE_INTEGER - (key[2] as number),
    requestId: key[3] as string,
  }),
  usagePrefix: (keyId: string) => ["usage", keyId] as const,
  usageRowsPrefix: () => ["usage"] as const,
  /** One counter of a key's usage in a UTC hour for a family and model (kv_usage_hours.ts): a KvU64 worth
   *  value·2^(32·limb) (limb 0 but for `charged`, kept in 32-bit limbs as `money` is). Sorted by hour, so a
   *  range of hours is one list. */
  usageHour: (keyId: string, hour: number, family: string, model: string, counter: string, limb: number) =>
    ["usage_hour", keyId, hour, family, model, counter, limb] as const,
  /** Where a key's counters of the hours from `hour` on start (a list's start or exclusive end). */
  usageHourFrom: (keyId: string, hour: number) => ["usage_hour", keyId, hour] as const,
  /** Present once the hourly sums count every usage row written before they existed (kv_usage_hours.ts). */
  usageHoursReady: () => ["usage_hours_ready"] as const,
  /** The store's format version, `{ version }` (kv_format.ts); absent in a file written before it. */
  storeFormat: () => ["store_format"] as const,
  /** Set in the same atomic as the `piece`-th atomic operation of the commit of batch `batchId`
   *  (kv_commit.ts commitBatch; batch_id.ts): a retry of the batch skips the atomics marked. Expires after
   *  BATCH_ID_TTL_MS. */
  commitDone: (batchId: string, piece: number) => ["commit_done", batchId, piece] as const,
  /** Drain checkpoint of a request still streaming when the process began to shut down. */
  open: (requestId: string) => ["open", requestId] as const,
  openPrefix: () => ["open"] as const,
  /** The live tariff: every rate row in one value (a few dozen rows, far below the 64 KiB limit). */
  tariff: () => ["tariff"] as const,
  /** File metadata, per key (listing a key's files is one prefix scan). */
  file: (keyId: string, fileId: string) => ["file", keyId, fileId] as const,
  filePrefix: (keyId: string) => ["file", keyId] as const,
  /** Where the chunks (≤ 60,000 bytes each; chunk n under `[...prefix, n]`, kv_chunks.ts) of the original bytes
   *  ("data") and of the serialized sections ("sections") are. */
  fileChunks: (fileId: string, part: "data" | "sections") => ["file_chunk", fileId, part] as const,
  fileChunkPrefix: (fileId: string) => ["file_chunk", fileId] as const,
  /** Per-key quota record: the live files' ids, sizes and expiry, taken and released atomically. */
  fileQuota: (keyId: string) => ["file_quota", keyId] as const,
  /** A shared document by its caller's name (kv_documents.ts), UTF-8 JSON of at most 60,000 bytes. */
  document: (name: string) => [name] as const,
  /** A member of an expiring set, per owner (listing an owner's members is one prefix scan; kv_expiring_sets.ts). */
  setMember: (set: string, owner: string, id: string) => [set, owner, id] as const,
  setOwnerPrefix: (set: string, owner: string) => [set, owner] as const,
  /** A dashboard session by the SHA-256 of its id (store.ts putSession), removed by KV at its expiry. */
  session: (hash: string) => ["dashboard_session", hash] as const,
  /** A key's request count of one counter over the UTC hour and day (kv_counters.ts). */
  requestCount: (keyId: string, counter: string) => ["request_count", keyId, counter] as const,
  /** The key shop (shop_store.ts): a package by id. */
  shopPackage: (id: string) => ["shop_package", id] as const,
  shopPackagePrefix: () => ["shop_package"] as const,
  /** A payment method by id, once changed: a method never written is its seed (SEED_PAYMENT_METHODS). */
  paymentMethod: (id: string) => ["payment_method", id] as const,
  paymentMethodPrefix: () => ["payment_method"] as const,
  /** A payment by id, and its indexes (written in the same atomic as the payment, moved with its status):
   *  every payment, by status and by chat, in the order of `createdAt`. */
  payment: (id: string) => ["payment", id] as const,
  paymentByTime: (createdAt: number, id: string) => ["payment_by_time", createdAt, id] as const,
  paymentByTimePrefix: () => ["payment_by_time"] as const,
  paymentByStatus: (status: string, createdAt: number, id: string) =>
    ["payment_by_status", status, createdAt, id] as const,
  paymentByStatusPrefix: (status: string) => ["payment_by_status", status] as const,
  paymentByChat: (chatId: number, createdAt: number, id: string) =>
    ["payment_by_chat", chatId, createdAt, id] as const,
  paymentByChatPrefix: (chatId: number) => ["payment_by_chat", chatId] as const,
  /** The payment a Telegram charge id settled: present once, so a second settlement with it is a duplicate. */
  paymentCharge: (chargeId: string) => ["payment_charge", chargeId] as const,
  /** A key's ledger entries in the order of `createdAt`. */
  ledgerEntry: (keyId: string, createdAt: number, id: string) =>
    ["ledger_entry", keyId, createdAt, id] as const,
  ledgerEntryPrefix: (keyId: string) => ["ledger_entry", keyId] as const,
  /** The chat that owns a key sold by the shop, with its alert (shop_types.ts KeyOwner); and the chat's keys. */
  keyOwner: (keyId: string) => ["key_owner", keyId] as const,
  keyOwnerPrefix: () => ["key_owner"] as const,
  chatKey: (chatId: number, keyId: string) => ["chat_key", chatId, keyId] as const,
  chatKeyPrefix: (chatId: number) => ["chat_key", chatId] as const,
  /** A Telegram update id the bot handled, removed by KV after its lifetime. */
  botUpdate: (updateId: number) => ["bot_update", updateId] as const,
  /** A gateway key's record of one Idempotency-Key (kv_idempotency.ts), removed by KV after its expiry. */
  idempotency: (keyId: string, key: string) => ["idempotency", keyId, key] as const,
  /** Where the chunks (chunk n under `[...prefix, n]`, kv_chunks.ts) of a kept answer's body are: under a fresh id
   *  per finish, named by the done record only, removed by KV at the answer's expiry. */
  idempotencyBody: (bodyId: string) => ["idempotency_body", bodyId] as const,
};
