/**
 * Money counters in Deno KV. A key's `spent` and `credited` are each a sum of 64-bit limbs (kv_keys.ts
 * `money`): a delta is cut into 32-bit pieces and each piece is added to its limb with the atomic `sum`
 * mutation — no read-modify-write, so two processes adding to the same key both count. Values up to
 * 2^96 pico-USD fit (the API accepts up to 10^15 USD = 10^27 pico-USD, beyond one KvU64).
 */
import type { KeyMeta, KeyMoney, KeyRecord } from "./types.ts";
import { kvKeys } from "./kv_keys.ts";
import { isDefaultSettings } from "./family_settings.ts";

const LIMB_BITS = 32n;
const LIMB_MASK = (1n << LIMB_BITS) - 1n;
/** Limbs per counter: 3 × 32 bits. */
export const LIMBS = 3;
const MAX = 1n << (LIMB_BITS * BigInt(LIMBS));

export type Counter = "spent" | "credited";

/** The non-zero 32-bit pieces of `value`, as [limb, piece]. */
export function pieces(value: bigint): [number, bigint][] {
  if (value < 0n || value >= MAX) throw new RangeError(`money counter delta out of range: ${value}`);
  const out: [number, bigint][] = [];
  for (let limb = 0; value > 0n; limb++, value >>= LIMB_BITS) {
    const piece = value & LIMB_MASK;
    if (piece > 0n) out.push([limb, piece]);
  }
  return out;
}

/** Adds `value` to a key's counter inside an atomic operation. */
export function addMoney(op: Deno.AtomicOperation, keyId: string, counter: Counter, value: bigint): void {
  for (const [limb, piece] of pieces(value)) op.sum(kvKeys.money(keyId, counter, limb), piece);
}

/**
 * Sets a key's counter to `value` inside an atomic operation (each limb to its 32-bit piece): only under a
 * check of every limb read (moneyKeys), since a concurrent `sum` would otherwise be overwritten. A refund's
 * debit (kv_payments.ts): the counters only grow by `sum`.
 */
export function setMoney(op: Deno.AtomicOperation, keyId: string, counter: Counter, value: bigint): void {
  if (value < 0n || value >= MAX) throw new RangeError(`money counter out of range: ${value}`);
  for (let limb = 0; limb < LIMBS; limb++) {
    op.set(
      kvKeys.money(keyId, counter, limb),
      new Deno.KvU64((value >> (LIMB_BITS * BigInt(limb))) & LIMB_MASK),
    );
  }
}

/** Number of mutations `addMoney` makes for `value`. */
export function moneyMutations(value: bigint): number {
  return pieces(value).length;
}

/** Every limb entry of a key's two counters, for a read whose versionstamps a later write checks. */
export function moneyKeys(keyId: string): Deno.KvKey[] {
  const keys: Deno.KvKey[] = [];
  for (const counter of ["spent", "credited"] as const) {
    for (let limb = 0; limb < LIMBS; limb++) keys.push(kvKeys.money(keyId, counter, limb));
  }
  return keys;
}

/** Sums limb entries (listed under kv_keys `moneyPrefix`, or read by `moneyKeys`) into per-key counters. */
export function foldMoney(
  into: Map<string, { spent: bigint; credited: bigint }>,
  entry: Deno.KvEntryMaybe<Deno.KvU64>,
): void {
  if (entry.value === null) return; // a limb never added to
  const [, id, counter, limb] = entry.key as [string, string, Counter, number];
  let m = into.get(id);
  if (!m) into.set(id, m = { spent: 0n, credited: 0n });
  m[counter] += entry.value.value << (LIMB_BITS * BigInt(limb));
}

/** A key's counters from its limb entries (read by `moneyKeys`; absent limbs count zero). */
export function sumLimbs(
  keyId: string,
  limbs: Deno.KvEntryMaybe<Deno.KvU64>[],
): { spent: bigint; credited: bigint } {
  const money = new Map<string, { spent: bigint; credited: bigint }>();
  for (const e of limbs) foldMoney(money, e);
  return money.get(keyId) ?? { spent: 0n, credited: 0n };
}

/** The stored metadata of a record (money removed: it lives in the counters only). */
export function metaOf(rec: KeyMeta | KeyRecord): KeyMeta {
  const { balance: _b, credited: _c, spent: _s, ...meta } = rec as KeyRecord;
  return meta;
}

/** A record of the format before money counters: its metadata carried balance, credited and spent. */
export function isLegacy(value: KeyMeta | KeyRecord): value is KeyRecord {
  return typeof (value as KeyRecord).balance === "bigint";
}

/** Metadata + counters → the domain record; balance = credited − spent. */
export function compose(meta: KeyMeta, money: { spent: bigint; credited: bigint } | undefined): KeyRecord {
  const credited = money?.credited ?? 0n;
  const spent = money?.spent ?? 0n;
  return { ...withNewFields(meta), balance: credited - spent, credited, spent };
}

/**
 * A record as stored, in the shape of this version: a KV value is the whole object as it was written, so
 * records stored before `families` existed carry the one family's settings of then as their own fields
 * (`thetaPaused`, and `thetaHourlyRequests` / `thetaDailyRequests`, absent before those limits: null). They
 * are read here, the one place that names them, into that family's entry (none when all are defaults, as
 * Postgres migration 12 does); records are written in the new shape only.
 */
export function withNewFields<T extends KeyMeta>(stored: T): T {
  if ((stored as Partial<KeyMeta>).families !== undefined) return stored;
  const { thetaPaused, thetaHourlyRequests, thetaDailyRequests, ...meta } = stored as T & {
    thetaPaused?: boolean;
    thetaHourlyRequests?: number | null;
    thetaDailyRequests?: number | null;
  };
  const theta = {
    paused: thetaPaused ?? false,
    hourlyRequests: thetaHourlyRequests ?? null,
    dailyRequests: thetaDailyRequests ?? null,
  };
  return { ...meta, families: isDefaultSettings(theta) ? {} : { theta } } as unknown as T;
}

/** The counters a legacy record migrates to: its balance and spend kept exactly (credited = balance + spent,
 *  which is its own `credited` whenever the old record kept the ledger identity). */
export function legacyMoney(rec: KeyMoney): { spent: bigint; credited: bigint } {
  return { spent: rec.spent, credited: rec.balance + rec.spent };
}
