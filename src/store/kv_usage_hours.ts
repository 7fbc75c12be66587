/**
 * A key's usage per UTC hour, family and model on Deno KV (store.ts usageHours). Each such hour has
 * up to 7 KvU64 counters (kv_keys.ts usageHour): requests, the three token counts, and charged in 32-bit
 * limbs as the money counters are (kv_money.ts: pico-USD pass one u64 beyond 18 million USD). A commit adds
 * to them with KV's atomic `sum` in the same atomic operation as the rows they count: blind writes, so two
 * writers never lose each other's and no row is durable without its sums. Reading hours is one key range.
 */
import type { Family } from "../catalog/models.ts";
import {
  commitChecked,
  keyBytes,
  MAX_KEY_BYTES,
  MAX_MUTATIONS,
  MAX_VALUE_BYTES,
  optimistic,
} from "./kv_atomic.ts";
import { entryRows, type NewEntry, usageEntries, type UsageEntry } from "./kv_usage_entries.ts";
import { kvKeys } from "./kv_keys.ts";
import { LIMBS, pieces } from "./kv_money.ts";
import type { UsageHour, UsageRow } from "./types.ts";
import { checkHourRange, hourOf } from "./usage_hours.ts";

/** The counters of an hour: UsageHour's sums, by name (the key's `counter` part). */
type Counter = "requests" | "charged" | "inputTokens" | "cachedInputTokens" | "outputTokens";
const TOKEN_COUNTERS = ["inputTokens", "cachedInputTokens", "outputTokens"] as const;
/** The most counters one hour has: requests, three token counts, the limbs of charged. */
const COUNTERS = 1 + TOKEN_COUNTERS.length + LIMBS;

/** Sums of rows of one (key, hour, family, model); `at` names its counters' keys. */
interface Totals {
  at: (counter: Counter, limb?: number) => Deno.KvKey;
  requests: bigint;
  charged: bigint;
  inputTokens: bigint;
  cachedInputTokens: bigint;
  outputTokens: bigint;
}

function totalsOf(u: UsageRow): Totals {
  const hour = hourOf(u);
  return {
    at: (counter, limb = 0) => kvKeys.usageHour(u.keyId, hour, u.family, u.model, counter, limb),
    requests: 0n,
    charged: 0n,
    inputTokens: 0n,
    cachedInputTokens: 0n,
    outputTokens: 0n,
  };
}

function addRow(t: Totals, u: UsageRow): void {
  t.requests++;
  t.charged += u.charged;
  for (const counter of TOKEN_COUNTERS) t[counter] += tokens(u[counter]);
}

/** A token count as a KvU64 addend; refused (RangeError, nothing written) when not a count. */
function tokens(n: number): bigint {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`usage row token count out of range: ${n}`);
  return BigInt(n);
}

/**
 * The counters' values: for `sum`, only the non-zero ones; with `all`, every counter, zeros too (a `set` then
 * replaces whatever the hour had, however its limbs were split). Charged is cut into 32-bit pieces.
 */
function counterValues(t: Totals, all = false): [Deno.KvKey, bigint][] {
  const out: [Deno.KvKey, bigint][] = [];
  const put = (key: Deno.KvKey, value: bigint) => {
    if (all || value > 0n) out.push([key, value]);
  };
  put(t.at("requests"), t.requests);
  for (const counter of TOKEN_COUNTERS) put(t.at(counter), t[counter]);
  const limbs = new Map(pieces(t.charged));
  for (let limb = 0; limb < LIMBS; limb++) put(t.at("charged", limb), limbs.get(limb) ?? 0n);
  return out;
}

/** A part of a commit that goes whole into one atomic operation (kv_commit.ts commitBatch): `n` mutations
 *  whose keys are `keyBytes` long together and whose values `valueBytes` at most. */
export interface UsagePart {
  n: number;
  keyBytes: number;
  valueBytes: number;
  write(op: Deno.AtomicOperation): void;
}

/**
 * A commit's usage rows as parts, each the entries (kv_usage_entries.ts) of batch `batchId` for one (key, hour,
 * family, model) with one `sum` per non-zero counter of their hour, within MAX_MUTATIONS, MAX_KEY_BYTES and
 * MAX_VALUE_BYTES: a group too big for one atomic is cut into several parts, each adding the sums of its own
 * rows. So wherever the commit splits, a row and its counting are in the same atomic. A row given twice (same key, time and
 * request id) in one batch is written and counted once, the last one, as Postgres upserts it once.
 */
export function usageParts(rows: readonly UsageRow[], batchId: string): UsagePart[] {
  const groups = new Map<string, UsageRow[]>();
  let last: UsageRow | undefined;
  let list: UsageRow[] = [];
  for (const u of distinct(rows)) {
    // A batch's rows come mostly in runs of one group (a key's requests for one model): the group's map key
    // is built only for a row outside the previous row's group.
    if (last === undefined || !sameGroup(last, u)) {
      const group = `${tagged(u.keyId)}${hourOf(u)}:${tagged(u.family)}${u.model}`;
      const known = groups.get(group);
      if (known) list = known;
      else groups.set(group, list = []);
    }
    last = u;
    list.push(u);
  }
  const parts: UsagePart[] = [];
  for (const group of groups.values()) {
    // Room kept for the counters: each at most as long as the longest one's key.
    const reserve = COUNTERS * keyBytes(totalsOf(group[0]!).at("cachedInputTokens"));
    let slice: NewEntry[] = [];
    let [bytes, values] = [reserve, 0];
    for (const e of usageEntries(group, batchId)) {
      if (
        slice.length > 0 &&
        (slice.length + 1 + COUNTERS > MAX_MUTATIONS || bytes + e.keyBytes > MAX_KEY_BYTES ||
          values + e.bytes > MAX_VALUE_BYTES)
      ) {
        parts.push(partOf(slice));
        [slice, bytes, values] = [[], reserve, 0];
      }
      slice.push(e);
      bytes += e.keyBytes;
      values += e.bytes;
    }
    parts.push(partOf(slice));
  }
  return parts;
}

/**
 * `rows` with a row given twice (same key, time and request id) once: the last one, where the first was. Request
 * ids are unique in practice, so the map of whole identities is built only once two rows share one. Till then
 * rows are looked up by their time and compared only with the rows of the same ms: a request id is never
 * hashed, as V8's first hash of a string made a while before costs ≈0.4 µs (docs/performance.md "The usage
 * row's bytes").
 */
function distinct(rows: readonly UsageRow[]): Iterable<UsageRow> {
  const atTime = new Map<number, UsageRow | UsageRow[]>();
  for (const u of rows) {
    const seen = atTime.get(u.createdAt);
    if (seen === undefined) atTime.set(u.createdAt, u);
    else if (Array.isArray(seen)) {
      // Many rows of one ms (a clock that stands still): the map of identities, not a square's comparisons.
      if (seen.length === MAX_AT_ONE_TIME) return unique(rows);
      for (const r of seen) if (sameRow(r, u)) return unique(rows);
      seen.push(u);
    } else {
      if (sameRow(seen, u)) return unique(rows);
      atTime.set(u.createdAt, [seen, u]);
    }
  }
  return rows;
}

/** Rows of one ms compared with each other before `distinct` takes the map of identities instead. */
const MAX_AT_ONE_TIME = 64;

/** Two rows of one time that are one row. */
const sameRow = (a: UsageRow, b: UsageRow) => a.requestId === b.requestId && a.keyId === b.keyId;

function unique(rows: readonly UsageRow[]): Iterable<UsageRow> {
  const byIdentity = new Map<string, UsageRow>();
  for (const r of rows) byIdentity.set(`${tagged(r.keyId)}${r.createdAt}:${r.requestId}`, r);
  return byIdentity.values();
}

const sameGroup = (a: UsageRow, b: UsageRow) =>
  a.keyId === b.keyId && a.family === b.family && a.model === b.model && hourOf(a) === hourOf(b);

/** A string prefixed with its length: joined with others into a map key no two different lists share. */
const tagged = (s: string) => `${s.length}:${s}`;

/** The entries (of one group) and the `sum`s that count their rows. */
function partOf(entries: NewEntry[]): UsagePart {
  const t = totalsOf(entries[0]!.rows[0]!);
  let [bytes, values] = [0, 0];
  for (const e of entries) {
    for (const u of e.rows) addRow(t, u);
    bytes += e.keyBytes;
    values += e.bytes;
  }
  const sums = counterValues(t);
  for (const [key] of sums) bytes += keyBytes(key);
  return {
    n: entries.length + sums.length,
    keyBytes: bytes,
    valueBytes: values + 16 * sums.length,
    write(op) {
      for (const e of entries) op.set(e.key, e.value);
      for (const [key, value] of sums) op.sum(key, value);
    },
  };
}

/** store.ts usageHours: the counters of the hours starting in [fromMs, toMs), one list, folded per hour. */
export async function readUsageHours(
  kv: Deno.Kv,
  keyId: string,
  fromMs: number,
  toMs: number,
): Promise<UsageHour[]> {
  checkHourRange(fromMs, toMs);
  if (toMs <= fromMs) return [];
  const out: UsageHour[] = [];
  let cur: UsageHour | undefined;
  const range = { start: kvKeys.usageHourFrom(keyId, fromMs), end: kvKeys.usageHourFrom(keyId, toMs) };
  for await (const e of kv.list<Deno.KvU64>(range)) {
    const [, , hour, family, model, counter, limb] = e.key as [
      string,
      string,
      number,
      Family,
      string,
      Counter,
      number,
    ];
    if (cur?.hour !== hour || cur.family !== family || cur.model !== model) {
      cur = emptyHour(hour, family, model);
      out.push(cur);
    }
    const value = e.value.value << (32n * BigInt(limb));
    if (counter === "charged") cur.charged += value;
    else cur[counter] += Number(value);
  }
  return out;
}

function emptyHour(hour: number, family: Family, model: string): UsageHour {
  return {
    hour,
    family,
    model,
    requests: 0,
    charged: 0n,
    inputTokens: 0,
    cachedInputTokens: 0,
    outputTokens: 0,
  };
}

/**
 * Makes the counters count the usage rows written before they existed (a KV file of an older version), once
 * per file and before the store commits anything (KvStore.open): while the ready marker is absent, every row
 * is read and each hour's counters are set — not added — to what its rows add up to, then the marker is
 * written. Every write checks that the marker is still absent, so processes opening a shared file at once may
 * each do it (they set the same values) but none writes once the marker is there, when commits may be adding
 * to the counters. Rows that a process of an older version writes meanwhile are not counted: a store shared
 * by processes is upgraded whole (as a Postgres migration is). Reads every row once: the time of a scan.
 */
export async function backfillUsageHours(kv: Deno.Kv): Promise<void> {
  const ready = kvKeys.usageHoursReady();
  if ((await kv.get(ready)).versionstamp !== null) return;
  const totals = new Map<string, Totals>();
  for await (const e of kv.list<UsageEntry>({ prefix: kvKeys.usageRowsPrefix() })) {
    for (const u of entryRows(e.value)) {
      const group = JSON.stringify([u.keyId, hourOf(u), u.family, u.model]);
      let t = totals.get(group);
      if (!t) totals.set(group, t = totalsOf(u));
      addRow(t, u);
    }
  }
  // Chunks of sets within one atomic's limits, each under the marker's check; the last one writes the marker.
  const chunks: [Deno.KvKey, bigint][][] = [[]];
  let [n, bytes] = [0, 2 * keyBytes(ready)];
  for (const t of totals.values()) {
    for (const [key, value] of counterValues(t, true)) {
      const b = keyBytes(key);
      if (n + 1 > MAX_MUTATIONS || bytes + b > MAX_KEY_BYTES) {
        chunks.push([]);
        [n, bytes] = [0, 2 * keyBytes(ready)];
      }
      chunks.at(-1)!.push([key, value]);
      [n, bytes] = [n + 1, bytes + b];
    }
  }
  for (const [i, chunk] of chunks.entries()) {
    // A lost check: the marker is there (another process finished: stop) or a shared file was locked (again).
    const written = await optimistic("usage hours backfill", async () => {
      const op = kv.atomic().check({ key: ready, versionstamp: null });
      for (const [key, value] of chunk) op.set(key, new Deno.KvU64(value));
      if (i === chunks.length - 1) op.set(ready, true);
      if (await commitChecked(op)) return { value: true };
      return (await kv.get(ready)).versionstamp !== null ? { value: false } : null;
    });
    if (!written) return;
  }
}
