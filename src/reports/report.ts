/**
 * A key's usage rows read back (newest first), shared by the usage report (spec §4.8, src/usage/) and the
 * key holder's dashboard (src/dashboard/): a per-UTC-day-and-model summary and a per-request listing with
 * positional continuations. Money stays pico-USD bigints until formatted as exact decimal strings.
 */
import type { Family } from "../catalog/models.ts";
import { formatUsd } from "../money/usd.ts";
import type { UsageStore } from "../store/store.ts";
import type { UsageRow } from "../store/types.ts";

/** Rows fetched per store round trip while scanning. */
const SCAN_CHUNK = 200;
const PICO_PER_MILLION_TOKENS = 1_000_000n;

/**
 * Which rows a scan keeps: the report's filters (family, endpoint) and the dashboard's (model, status,
 * stream); null or absent keeps every row.
 */
export interface RowFilters {
  family: Family | null;
  endpoint: string | null;
  model?: string | null;
  status?: UsageRow["status"] | null;
  stream?: boolean | null;
}

export interface RowQuery {
  filters: RowFilters;
  /** createdAt bounds in ms: from inclusive, to exclusive. */
  fromMs: number | null;
  toMs: number | null;
}

/** Rows of one key from a position on, each with the continuation just past it and whether the query keeps
 *  it. Stops at the `fromMs` bound, since rows are newest first. */
async function* readRows(
  store: UsageStore,
  keyId: string,
  q: RowQuery,
  after: string | null,
): AsyncGenerator<{ row: UsageRow; cursor: string; kept: boolean }> {
  let pos = after;
  while (true) {
    const page = await store.listUsage(
      keyId,
      pos === null ? { limit: SCAN_CHUNK } : { limit: SCAN_CHUNK, after: pos },
    );
    for (let i = 0; i < page.rows.length; i++) {
      const row = page.rows[i]!;
      if (q.fromMs !== null && row.createdAt < q.fromMs) return;
      yield { row, cursor: page.cursors[i]!, kept: matches(row, q) };
    }
    if (page.next === undefined) return;
    pos = page.next;
  }
}

/** The rows of one key the query keeps, from a position on, each with the continuation just past it. */
export async function* scanRows(
  store: UsageStore,
  keyId: string,
  q: RowQuery,
  after: string | null,
): AsyncGenerator<{ row: UsageRow; cursor: string }> {
  for await (const { row, cursor, kept } of readRows(store, keyId, q, after)) if (kept) yield { row, cursor };
}

export function matches(row: UsageRow, q: RowQuery): boolean {
  const f = q.filters;
  if (f.family !== null && row.family !== f.family) return false;
  if (f.endpoint !== null && row.endpoint !== f.endpoint) return false;
  if (f.model != null && row.model !== f.model) return false;
  if (f.status != null && row.status !== f.status) return false;
  if (f.stream != null && row.stream !== f.stream) return false;
  if (q.fromMs !== null && row.createdAt < q.fromMs) return false;
  if (q.toMs !== null && row.createdAt >= q.toMs) return false;
  return true;
}

interface Group {
  date: string;
  family: string;
  model: string;
  requests: number;
  input_tokens: number;
  cached_input_tokens: number;
  output_tokens: number;
  web_search_requests: number;
  cost: bigint;
}

export async function usageSummary(store: UsageStore, keyId: string, q: RowQuery) {
  const groups = new Map<string, Group>();
  let total = 0n;
  for await (const { row } of scanRows(store, keyId, q, null)) {
    const date = new Date(row.createdAt).toISOString().slice(0, 10);
    const id = `${date}\n${row.model}`;
    let g = groups.get(id);
    if (!g) {
      g = {
        date,
        family: row.family,
        model: row.model,
        requests: 0,
        input_tokens: 0,
        cached_input_tokens: 0,
        output_tokens: 0,
        web_search_requests: 0,
        cost: 0n,
      };
      groups.set(id, g);
    }
    g.requests++;
    g.input_tokens += row.inputTokens;
    g.cached_input_tokens += row.cachedInputTokens;
    g.output_tokens += row.outputTokens;
    g.web_search_requests += row.webSearchRequests;
    g.cost += row.charged;
    total += row.charged;
  }
  const data = [...groups.values()]
    .sort((a, b) =>
      a.date < b.date ? 1 : a.date > b.date ? -1 : a.model < b.model ? -1 : a.model > b.model ? 1 : 0
    )
    .map(({ cost, ...g }) => ({ ...g, cost_usd: formatUsd(cost) }));
  return { object: "list" as const, data, total_cost_usd: formatUsd(total) };
}

/**
 * One page of requests: `limit` kept rows after `after`, and the continuation of the next page when another
 * one exists. `maxScan` bounds the rows read for one page (a filter that keeps few rows of a long history):
 * once it is read, the page ends there, possibly short, and continues just past the last row read.
 */
export async function usageRequestsPage(
  store: UsageStore,
  keyId: string,
  q: RowQuery & { limit: number },
  after: string | null,
  maxScan = Infinity,
): Promise<{ rows: UsageRow[]; after: string | null }> {
  const rows: UsageRow[] = [];
  let last: string | null = null;
  let read = 0;
  for await (const { row, cursor, kept } of readRows(store, keyId, q, after)) {
    if (kept && rows.length === q.limit) return { rows, after: last };
    if (read === maxScan) return { rows, after: last };
    read++;
    last = cursor;
    if (kept) rows.push(row);
  }
  return { rows, after: null };
}

export function requestView(row: UsageRow) {
  const released = row.reserved > row.charged ? row.reserved - row.charged : 0n;
  return {
    request_id: row.requestId,
    created_at: new Date(row.createdAt).toISOString(),
    family: row.family,
    model: row.model,
    // The model that answered, when the family answered with another (theta's fallback); else the model.
    served_by: row.servedModel ?? row.model,
    endpoint: row.endpoint,
    stream: row.stream,
    status: row.status,
    input_tokens: row.inputTokens,
    cached_input_tokens: row.cachedInputTokens,
    output_tokens: row.outputTokens,
    web_search_requests: row.webSearchRequests,
    web_search_fee_usd: formatUsd(row.searchFee ?? 0n),
    reserved_usd: formatUsd(row.reserved),
    charged_usd: formatUsd(row.charged),
    released_usd: formatUsd(released),
    // Usage priced beyond what the balance could cover; not charged (rows written before it existed: 0).
    written_off_usd: formatUsd(row.writtenOff ?? 0n),
    usage_source: row.usageSource,
    rates_usd_per_million: {
      input: formatUsd(row.rates.input * PICO_PER_MILLION_TOKENS),
      cache_read: formatUsd(row.rates.cacheRead * PICO_PER_MILLION_TOKENS),
      output: formatUsd(row.rates.output * PICO_PER_MILLION_TOKENS),
    },
  };
}
