/**
 * The backup file (docs/backup.md): NDJSON, one record per line. The first line is the header naming the
 * format and its version; the last is the trailer with the count of the lines between and the SHA-256 of every
 * byte before it. Money is pico-USD as decimal text (src/money/usd.ts). Every record is checked against its
 * schema before a restore writes anything: a backup file is input, never trusted.
 */
import { z } from "zod";
import { FAMILIES, type Family } from "../catalog/models.ts";

export const BACKUP_FORMAT = "llm-gateway-backup";
/** The version this build writes and the newest it reads. */
export const BACKUP_VERSION = 1;

const big = z.string().regex(/^-?[0-9]{1,40}$/).transform(BigInt);
const bigOrNull = big.nullable();
const time = z.number().int().min(0);
const count = z.number().int().min(0);
const id = z.string().min(1).max(200);
const text = z.string().max(10_000);

export const headerSchema = z.object({
  t: z.literal("header"),
  format: z.literal(BACKUP_FORMAT),
  version: z.number().int().min(1),
  created_at: time,
  /** The store it was read from: "kv" or "postgres". */
  source: z.enum(["kv", "postgres"]),
});

export const trailerSchema = z.object({
  t: z.literal("end"),
  /** Lines between the header and the trailer. */
  records: count,
  /** SHA-256 (hex) of every byte of the file before the trailer's line. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});

const familySettings = z.record(
  z.string().max(50),
  z.object({ paused: z.boolean(), hourlyRequests: count.nullable(), dailyRequests: count.nullable() }),
);

const keyRecord = z.object({
  t: z.literal("key"),
  id,
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  hint: z.string().max(100),
  name: text.nullable(),
  createdAt: time,
  revoked: z.boolean(),
  expiresAt: time.nullable(),
  suspendedUntil: time.nullable(),
  families: familySettings,
  membership: z.literal("private").nullable(),
  credited: big,
  spent: big,
  caps: z.object({
    hourlySpend: bigOrNull,
    dailySpend: bigOrNull,
    hourlyReserve: bigOrNull,
    dailyReserve: bigOrNull,
  }),
});

const usageFields = {
  requestId: id,
  keyId: id,
  family: z.enum(FAMILIES as [Family, ...Family[]]),
  model: z.string().min(1).max(200),
};

const usageRecord = z.object({
  t: z.literal("usage"),
  ...usageFields,
  endpoint: z.string().max(200),
  stream: z.boolean(),
  status: z.enum(["ok", "error", "cancelled"]),
  createdAt: time,
  inputTokens: count,
  cachedInputTokens: count,
  outputTokens: count,
  webSearchRequests: count,
  searchFee: big.optional(),
  reserved: big,
  charged: big,
  writtenOff: big,
  servedModel: z.string().max(200).optional(),
  usageSource: z.enum(["upstream", "estimated"]),
  rates: z.object({ input: big, cacheRead: big, output: big, search: big }),
});

const usageHourRecord = z.object({
  t: z.literal("usage_hour"),
  keyId: id,
  hour: time,
  family: usageFields.family,
  model: usageFields.model,
  requests: count,
  charged: big,
  inputTokens: count,
  cachedInputTokens: count,
  outputTokens: count,
});

const ledgerRecord = z.object({
  t: z.literal("ledger"),
  id,
  keyId: id,
  kind: z.enum(["credit", "debit"]),
  amountUsd: big,
  reference: text,
  createdAt: time,
});

const tariffRecord = z.object({
  t: z.literal("tariff"),
  rows: z.array(z.object({
    model: z.string().min(1).max(200),
    aboveInputTokens: count.optional(),
    input: z.string().max(50),
    cacheRead: z.string().max(50).optional(),
    output: z.string().max(50),
    search: z.object({ usd: z.string().max(50), per: z.enum(["search", "request"]) }).optional(),
    memberDiscount: z.boolean().optional(),
  })).max(10_000),
});

const packageRecord = z.object({
  t: z.literal("package"),
  id,
  name: text,
  creditUsd: big,
  price: count,
  currency: z.string().min(1).max(10),
  active: z.boolean(),
});

const paymentMethodRecord = z.object({
  t: z.literal("payment_method"),
  id,
  title: text,
  kind: z.enum(["stars", "manual"]),
  available: z.boolean(),
  details: text.nullable(),
});

const paymentRecord = z.object({
  t: z.literal("payment"),
  id,
  chatId: z.number().int(),
  packageId: id,
  methodId: id,
  keyId: id.nullable(),
  creditUsd: big,
  price: count,
  currency: z.string().min(1).max(10),
  status: z.enum(["pending", "credited", "refund_due", "refunded", "cancelled"]),
  telegramChargeId: z.string().max(500).nullable(),
  createdAt: time,
});

const ownerRecord = z.object({
  t: z.literal("owner"),
  keyId: id,
  chatId: z.number().int(),
  alertThreshold: bigOrNull,
  lastCreditUsd: big,
  alerted: z.boolean(),
});

const fileRecord = z.object({
  t: z.literal("file"),
  id,
  keyId: id,
  filename: z.string().max(1000),
  purpose: z.string().max(100),
  contentType: z.string().max(200),
  bytes: count,
  createdAt: time,
  expiresAt: time,
  storedBytes: count,
  /** The original bytes, base64. */
  data: z.string(),
  /** The extracted sections (spec §2.3). */
  sections: z.array(z.object({ text: z.string(), anchor: z.string().max(1000) })),
});

export const recordSchema = z.discriminatedUnion("t", [
  tariffRecord,
  paymentMethodRecord,
  packageRecord,
  keyRecord,
  ledgerRecord,
  ownerRecord,
  paymentRecord,
  usageRecord,
  usageHourRecord,
  fileRecord,
]);

export type BackupHeader = z.infer<typeof headerSchema>;
export type BackupRecord = z.infer<typeof recordSchema>;
/** A record as a snapshot produces it: money still bigint (encoded to text when written). */
export type RecordOf<T extends BackupRecord["t"]> = Extract<BackupRecord, { t: T }>;
