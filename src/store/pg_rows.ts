/**
 * Row codecs of the Postgres store. Money goes out as decimal strings into `numeric(40,0)` and comes back
 * as strings (the client's default for numeric and int8), read with BigInt: exact both ways. Batches are sent
 * column-wise as text arrays cast in SQL (`$1::text[]::numeric[]`), so one statement inserts any number of
 * rows with a fixed text (one prepared statement).
 */
import type { Family } from "../catalog/models.ts";
import type { StoredFile } from "./store.ts";
import { rollWindow } from "./shared_window.ts";
import { parseFamilySettings } from "./family_settings.ts";
import type { Sql } from "./pg_connect.ts";
import type postgres from "postgres";
import type {
  KeyMeta,
  KeyRecord,
  LeaseView,
  MoneyDelta,
  SharedWindow,
  UsageHour,
  UsageRow,
} from "./types.ts";

type Row = Record<string, any>;
type JsonParameter = Sql["json"];
type Text = string | null;

const big = (v: bigint | null | undefined): Text => v === null || v === undefined ? null : v.toString();
const int = (v: string | null): number | null => v === null ? null : Number(v);

/** One column of a batch: its name, SQL type and how a record gives its value as text. */
export type Column<T> = readonly [name: string, type: string, encode: (v: T) => Text];

/** Every column of a usage row (the rows and the drain checkpoints share them). */
export const USAGE_COLUMNS: readonly Column<UsageRow>[] = [
  ["key_id", "text", (u) => u.keyId],
  ["created_at", "int8", (u) => String(u.createdAt)],
  ["request_id", "text", (u) => u.requestId],
  ["family", "text", (u) => u.family],
  ["model", "text", (u) => u.model],
  ["endpoint", "text", (u) => u.endpoint],
  ["stream", "bool", (u) => String(u.stream)],
  ["status", "text", (u) => u.status],
  ["input_tokens", "int8", (u) => String(u.inputTokens)],
  ["cached_input_tokens", "int8", (u) => String(u.cachedInputTokens)],
  ["output_tokens", "int8", (u) => String(u.outputTokens)],
  ["web_search_requests", "int8", (u) => String(u.webSearchRequests)],
  ["search_fee", "numeric", (u) => big(u.searchFee)],
  ["reserved", "numeric", (u) => big(u.reserved)],
  ["charged", "numeric", (u) => big(u.charged)],
  ["written_off", "numeric", (u) => big(u.writtenOff)],
  ["usage_source", "text", (u) => u.usageSource],
  ["served_model", "text", (u) => u.servedModel ?? null],
  ["rate_input", "numeric", (u) => big(u.rates.input)],
  ["rate_cache_read", "numeric", (u) => big(u.rates.cacheRead)],
  ["rate_output", "numeric", (u) => big(u.rates.output)],
  ["rate_search", "numeric", (u) => big(u.rates.search)],
];

/** A commit's money deltas, one row each; the lease columns are null for a delta without a lease. */
export const MONEY_COLUMNS: readonly Column<MoneyDelta>[] = [
  ["key_id", "text", (d) => d.keyId],
  ["spent", "numeric", (d) => big(d.spent)],
  ["credited", "numeric", (d) => big(d.credited)],
  ["holder", "text", (d) => d.lease?.holder ?? null],
  ["returned", "numeric", (d) => big(d.lease?.returned)],
  ["reserved", "numeric", (d) => big(d.lease?.reserved)],
];

/** The column arrays of a batch, in `columns` order: one text array per column. */
export function columnArrays<T>(columns: readonly Column<T>[], items: readonly T[]): Text[][] {
  return columns.map(([, , encode]) => items.map(encode));
}

/** `unnest($from::text[]::type[], …)`: the batch's columns as rows, parameters numbered from `from`. */
export function unnestOf<T>(columns: readonly Column<T>[], from: number): string {
  return `unnest(${columns.map(([, type], i) => `$${from + i}::text[]::${type}[]`).join(", ")})`;
}

export function usageFromRow(r: Row): UsageRow {
  return {
    requestId: r.request_id,
    keyId: r.key_id,
    family: r.family as Family,
    model: r.model,
    endpoint: r.endpoint,
    stream: r.stream,
    status: r.status,
    createdAt: Number(r.created_at),
    inputTokens: Number(r.input_tokens),
    cachedInputTokens: Number(r.cached_input_tokens),
    outputTokens: Number(r.output_tokens),
    webSearchRequests: Number(r.web_search_requests),
    ...(r.search_fee === null ? {} : { searchFee: BigInt(r.search_fee) }),
    reserved: BigInt(r.reserved),
    charged: BigInt(r.charged),
    writtenOff: BigInt(r.written_off),
    usageSource: r.usage_source,
    ...(r.served_model === null || r.served_model === undefined ? {} : { servedModel: r.served_model }),
    rates: {
      input: BigInt(r.rate_input),
      cacheRead: BigInt(r.rate_cache_read),
      output: BigInt(r.rate_output),
      search: BigInt(r.rate_search),
    },
  };
}

/** A key's metadata as a `keys` row (money columns apart: only createKey and the commit write them). */
export function usageHourFromRow(r: Row): UsageHour {
  return {
    hour: Number(r.hour),
    family: r.family as Family,
    model: r.model,
    requests: Number(r.requests),
    charged: BigInt(r.charged),
    inputTokens: Number(r.input_tokens),
    cachedInputTokens: Number(r.cached_input_tokens),
    outputTokens: Number(r.output_tokens),
  };
}

/** `json`: the connection's JSON parameter (sql.json), as which the settings go into their jsonb column. */
export function keyMetaRow(m: KeyMeta, json: JsonParameter) {
  return {
    id: m.id,
    hash: m.hash,
    hint: m.hint,
    name: m.name,
    created_at: String(m.createdAt),
    revoked: m.revoked,
    expires_at: m.expiresAt === null ? null : String(m.expiresAt),
    suspended_until: m.suspendedUntil === null ? null : String(m.suspendedUntil),
    family_settings: json(m.families as unknown as postgres.JSONValue),
    membership: m.membership,
    cap_hourly_spend: big(m.caps.hourlySpend),
    cap_daily_spend: big(m.caps.dailySpend),
    cap_hourly_reserve: big(m.caps.hourlyReserve),
    cap_daily_reserve: big(m.caps.dailyReserve),
  };
}

/** A new key's row: its metadata, its first counters and its change stamp (this process's clock). */
export function newKeyRow(rec: KeyRecord, json: JsonParameter) {
  return {
    ...keyMetaRow(rec, json),
    credited: rec.credited.toString(),
    spent: rec.spent.toString(),
    changed_at: Date.now(),
  };
}

const bigOrNull = (v: string | null): bigint | null => v === null ? null : BigInt(v);

/** A `keys` row as a record; `onBad` hears of family settings of the wrong shape, read as none
 *  (family_settings.ts parseFamilySettings). */
export function keyFromRow(r: Row, onBad?: (family: string) => void): KeyRecord {
  const credited = BigInt(r.credited);
  const spent = BigInt(r.spent);
  return {
    id: r.id,
    hash: r.hash,
    hint: r.hint,
    name: r.name,
    createdAt: Number(r.created_at),
    revoked: r.revoked,
    expiresAt: int(r.expires_at),
    suspendedUntil: int(r.suspended_until),
    families: parseFamilySettings(r.family_settings, onBad),
    membership: r.membership,
    balance: credited - spent,
    credited,
    spent,
    caps: {
      hourlySpend: bigOrNull(r.cap_hourly_spend),
      dailySpend: bigOrNull(r.cap_daily_spend),
      hourlyReserve: bigOrNull(r.cap_hourly_reserve),
      dailyReserve: bigOrNull(r.cap_daily_reserve),
    },
  };
}

/** The shared windows of a `keys` row as stored (not rolled). */
export function windowFromRow(r: Row): SharedWindow {
  return {
    hourStart: Number(r.hour_start),
    dayStart: Number(r.day_start),
    hourSpent: BigInt(r.hour_spent),
    daySpent: BigInt(r.day_spent),
    hourReserved: BigInt(r.hour_reserved),
    dayReserved: BigInt(r.day_reserved),
  };
}

/** A key's view at `now` from its `keys` row plus the sums `leased` and `mine` of its live leases. */
export function leaseViewFromRow(r: Row, now: number): LeaseView {
  return {
    credited: BigInt(r.credited),
    spent: BigInt(r.spent),
    leased: BigInt(r.leased),
    mine: BigInt(r.mine),
    window: rollWindow(windowFromRow(r), now),
  };
}

/** The metadata columns of `files` (everything but the bytes). */
export const FILE_COLUMNS =
  "key_id, id, filename, purpose, content_type, bytes, created_at, expires_at, stored_bytes";

export function fileRow(f: StoredFile) {
  return {
    key_id: f.keyId,
    id: f.id,
    filename: f.filename,
    purpose: f.purpose,
    content_type: f.contentType,
    bytes: String(f.bytes),
    created_at: String(f.createdAt),
    expires_at: String(f.expiresAt),
    stored_bytes: String(f.storedBytes),
  };
}

export function fileFromRow(r: Row): StoredFile {
  return {
    id: r.id,
    keyId: r.key_id,
    filename: r.filename,
    purpose: r.purpose,
    contentType: r.content_type,
    bytes: Number(r.bytes),
    createdAt: Number(r.created_at),
    expiresAt: Number(r.expires_at),
    storedBytes: Number(r.stored_bytes),
  };
}
