/**
 * A usage row as Deno KV stores it outside a packed entry (kv_usage_pack.ts), and a bound of its encoded size.
 * In a format-3 usage entry (kv_usage_entries.ts) it is an array of its values in a fixed order, read here; an
 * open row (a stream's drain checkpoint, kv_commit.ts) is an object, V8's serialization of which `rowBytes`
 * bounds. In a format-3 array an absent optional field is `null` in its place.
 */
import type { Family } from "../catalog/models.ts";
import type { UsageRow } from "./types.ts";

export type RowTuple = readonly [
  requestId: string,
  keyId: string,
  family: string,
  model: string,
  endpoint: string,
  stream: boolean,
  status: string,
  createdAt: number,
  inputTokens: number,
  cachedInputTokens: number,
  outputTokens: number,
  webSearchRequests: number,
  searchFee: bigint | null,
  reserved: bigint,
  charged: bigint,
  writtenOff: bigint,
  servedModel: string | null,
  usageSource: string,
  rateInput: bigint,
  rateCacheRead: bigint,
  rateOutput: bigint,
  rateSearch: bigint,
];

/** The row again, its fields in the order the ledger builds them (billing/ledger.ts), an absent one absent. */
export function tupleRow(t: RowTuple): UsageRow {
  return {
    requestId: t[0],
    keyId: t[1],
    family: t[2] as Family,
    model: t[3],
    endpoint: t[4],
    stream: t[5],
    status: t[6] as UsageRow["status"],
    createdAt: t[7],
    inputTokens: t[8],
    cachedInputTokens: t[9],
    outputTokens: t[10],
    webSearchRequests: t[11],
    ...(t[12] === null ? {} : { searchFee: t[12] }),
    reserved: t[13],
    charged: t[14],
    writtenOff: t[15],
    usageSource: t[17] as UsageRow["usageSource"],
    ...(t[16] === null ? {} : { servedModel: t[16] }),
    rates: { input: t[18], cacheRead: t[19], output: t[20], search: t[21] },
  };
}

const B64 = 1n << 64n;
const B128 = 1n << 128n;

/** A row's property names, tags and numbers, and its strings' headers, serialized: 330 bytes with its strings
 *  empty and its bigints zero; the rest is room for longer varints and an array's slot. */
const ROW_FIXED_BYTES = 360;

/** At least the size of `u` as an object in V8's serialization (Deno KV's value encoding). */
export function rowBytes(u: UsageRow): number {
  const n = ROW_FIXED_BYTES + 2 * (u.requestId.length + u.keyId.length + u.family.length + u.model.length +
        u.endpoint.length + u.status.length + u.usageSource.length + (u.servedModel?.length ?? 0));
  const r = u.rates;
  return n + bigintBytes(u.searchFee ?? 0n) + bigintBytes(u.reserved) + bigintBytes(u.charged) +
    bigintBytes(u.writtenOff) + bigintBytes(r.input) + bigintBytes(r.cacheRead) + bigintBytes(r.output) +
    bigintBytes(r.search);
}

function bigintBytes(b: bigint): number {
  if (b < B64 && b > -B64) return 10;
  if (b < B128 && b > -B128) return 18;
  return 14 + 8 * Math.ceil((b < 0n ? -b : b).toString(16).length / 16);
}
