/**
 * A key's usage per UTC hour, family and model on Deno KV (store.ts usageHours; issue 19). Each such hour has
 * up to 7 KvU64 counters (kv_keys.ts usageHour): requests, the three token counts, and charged in 32-bit
 * limbs as the money counters are (kv_money.ts: pico-USD pass one u64 beyond 18 million USD). A commit adds
 * to them with KV's atomic `sum` in the same atomic operation as the rows they count: blind writes, so two
 * writers never lose each other's and no row is durable without its sums. Reading hours is one key range.
 */
import type { Family } from "../catalog/models.ts";
import { kvKeys } from "./kv_keys.ts";
import { pieces } from "./kv_money.ts";
import type { UsageHour, UsageRow } from "./types.ts";
import { checkHourRange, hourOf } from "./usage_hours.ts";

/** The counters of an hour: UsageHour's sums, by name (the key's `counter` part). */
type Counter = "requests" | "charged" | "inputTokens" | "cachedInputTokens" | "outputTokens";
const TOKEN_COUNTERS = ["inputTokens", "cachedInputTokens", "outputTokens"] as const;

/** The most counters one hour's sums write: requests, three token counts, three limbs of charged. */
export const MAX_HOUR_MUTATIONS = 7;

/** The KvU64 entries (key, value) that add `rows` (all of one key, hour, family and model) to their hour. */
function hourSums(rows: readonly UsageRow[]): [Deno.KvKey, bigint][] {
  const first = rows[0]!;
  const at = (counter: Counter, limb = 0) =>
    kvKeys.usageHour(first.keyId, hourOf(first), first.family, first.model, counter, limb);
  const out: [Deno.KvKey, bigint][] = [[at("requests"), BigInt(rows.length)]];
  for (const counter of TOKEN_COUNTERS) {
    let sum = 0n;
    for (const u of rows) sum += tokens(u[counter]);
    if (sum > 0n) out.push([at(counter), sum]);
  }
  let charged = 0n;
  for (const u of rows) charged += u.charged;
  for (const [limb, piece] of pieces(charged)) out.push([at("charged", limb), piece]);
  return out;
}

/** A token count as a KvU64 addend; refused (RangeError, nothing written) when not a count. */
function tokens(n: number): bigint {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`usage row token count out of range: ${n}`);
  return BigInt(n);
}

/** A part of a commit that goes whole into one atomic operation (kv_store.ts commit): `n` mutations. */
export interface UsagePart {
  n: number;
  write(op: Deno.AtomicOperation): void;
}

/**
 * A commit's usage rows as parts, each the rows of one (key, hour, family, model) with one `sum` per counter
 * of their hour, at most `maxMutations` mutations: a group too big for one atomic is cut into several parts,
 * each adding the sums of its own rows. So wherever the commit splits, a row and its counting are in the
 * same atomic. A row given twice (same key, time and request id) is written and counted once, the last one,
 * as Postgres upserts it once.
 */
export function usageParts(rows: readonly UsageRow[], maxMutations: number): UsagePart[] {
  const unique = new Map<string, UsageRow>();
  for (const u of rows) unique.set(JSON.stringify([u.keyId, u.createdAt, u.requestId]), u);
  const groups = new Map<string, UsageRow[]>();
  for (const u of unique.values()) {
    const group = JSON.stringify([u.keyId, hourOf(u), u.family, u.model]);
    const list = groups.get(group);
    if (list) list.push(u);
    else groups.set(group, [u]);
  }
  const perPart = maxMutations - MAX_HOUR_MUTATIONS;
  const parts: UsagePart[] = [];
  for (const group of groups.values()) {
    for (let i = 0; i < group.length; i += perPart) {
      const slice = group.slice(i, i + perPart);
      const sums = hourSums(slice);
      parts.push({
        n: slice.length + sums.length,
        write(op) {
          for (const u of slice) op.set(kvKeys.usage(u.keyId, u.createdAt, u.requestId), u);
          for (const [key, value] of sums) op.sum(key, value);
        },
      });
    }
  }
  return parts;
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
