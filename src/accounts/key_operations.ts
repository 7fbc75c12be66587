/**
 * Operations on keys, shared by the admin HTTP API, the admin CLI and the key holder's dashboard (its view of
 * the key and its theta switch, src/dashboard/): here, below the handlers' layer, so both handler folders
 * reach the one implementation. Bodies are validated with zod; money goes in and out as exact decimal USD
 * strings.
 */
import { z } from "zod";
import type { Account, Accounts } from "./accounts.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import { formatUsd, parseUsd } from "../money/usd.ts";
import type { KeyRecord } from "../store/types.ts";
import { familySettings } from "../store/family_settings.ts";

/** The family the admin API's `theta` and `theta_paused` fields set (spec §3.2, §7.6), kept in the key's
 *  per-family settings under its name (src/families/theta/key_settings.ts reads them). */
const THETA = "theta";

const usd = z.string().regex(/^\d{1,15}(\.\d{1,12})?$/, 'decimal USD string, e.g. "10.00"');
const isoTime = z.string().refine((s) => !Number.isNaN(Date.parse(s)), "ISO 8601 timestamp");
const membership = z.enum(["private"]).nullable();
/** A theta request limit per window (spec §7.6): 0 admits none; null removes the limit. */
const requestLimit = z.number().int().min(0).max(1_000_000_000).nullable();

export const schemas = {
  create: z.object({
    balance_usd: usd,
    name: z.string().max(200).optional(),
    membership: membership.optional(),
  })
    .strict(),
  topup: z.object({ amount_usd: usd }).strict(),
  expire: z.object({ at: isoTime }).strict(),
  /** `until: null` lifts a suspension, the operator's or the automatic rule's. */
  suspend: z.object({ until: isoTime.nullable() }).strict(),
  /** Every field optional; an absent one keeps its value. */
  theta: z.object({ paused: z.boolean(), hourly_requests: requestLimit, daily_requests: requestLimit })
    .partial().strict(),
  membership: z.object({ membership }).strict(),
  caps: z.object({
    hourly_spend_usd: usd.nullable(),
    daily_spend_usd: usd.nullable(),
    hourly_reserve_usd: usd.nullable(),
    daily_reserve_usd: usd.nullable(),
  }).partial().strict(),
};

export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const r = schema.safeParse(body);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new GatewayError("invalid_request", { param: issue.path.join(".") || null, detail: issue.message });
  }
  return r.data;
}

export function keyState(rec: KeyRecord, now: number): "active" | "revoked" | "expired" | "suspended" {
  if (rec.revoked) return "revoked";
  if (rec.expiresAt !== null && rec.expiresAt <= now) return "expired";
  if (rec.suspendedUntil !== null && rec.suspendedUntil > now) return "suspended";
  return "active";
}

const money = (v: bigint | null) => (v === null ? null : formatUsd(v));
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/**
 * The key as operators see it. On a shared store its money is read from the store first (this process's
 * settlements flushed), and `leased_usd` says how much of the balance sits in live leases of any process
 * (docs/operator-guide.md "Several processes").
 */
export async function keyView(accounts: Accounts, acc: Account, now: number) {
  const leased = await accounts.syncMoney(acc);
  const r = acc.rec;
  const theta = familySettings(r, THETA);
  return {
    id: r.id,
    object: "key",
    name: r.name,
    hint: r.hint,
    state: keyState(r, now),
    membership: r.membership,
    // Kept beside `theta` for clients of the earlier view.
    theta_paused: theta.paused,
    theta: {
      paused: theta.paused,
      hourly_requests: theta.hourlyRequests,
      daily_requests: theta.dailyRequests,
    },
    // Shared store: credit sitting unspent in a lease is balance (credited = balance + held + spent).
    balance_usd: formatUsd(leased === undefined ? accounts.available(acc) : r.balance - acc.held),
    held_usd: formatUsd(acc.held),
    spent_usd: formatUsd(r.spent),
    credited_usd: formatUsd(r.credited),
    ...(leased === undefined ? {} : { leased_usd: formatUsd(leased) }),
    created_at: iso(r.createdAt),
    expires_at: iso(r.expiresAt),
    suspended_until: iso(r.suspendedUntil),
    caps: {
      hourly_spend_usd: money(r.caps.hourlySpend),
      daily_spend_usd: money(r.caps.dailySpend),
      hourly_reserve_usd: money(r.caps.hourlyReserve),
      daily_reserve_usd: money(r.caps.dailyReserve),
    },
  };
}

export type KeyAction = "topup" | "revoke" | "expire" | "suspend" | "theta" | "membership" | "caps";

/** Applies one action to a key; returns the updated view. */
export async function applyKeyAction(
  accounts: Accounts,
  id: string,
  action: KeyAction,
  body: unknown,
  now: number,
) {
  if (action === "suspend") {
    // The one suspension mechanism, shared with the automatic rule (src/auth/suspension_rule.ts).
    const until = parseBody(schemas.suspend, body).until;
    const acc = await accounts.suspend(id, until === null ? null : Date.parse(until));
    if (!acc) throw new GatewayError("key_not_found");
    return await keyView(accounts, acc, now);
  }
  if (action === "topup") {
    // Money moves through the ledger, as a credit delta; every other action changes the key's metadata.
    const amount = parseUsd(parseBody(schemas.topup, body).amount_usd);
    const acc = await accounts.topUp(id, amount, now);
    if (!acc) throw new GatewayError("key_not_found");
    return await keyView(accounts, acc, now);
  }
  let change: (r: KeyRecord) => void;
  switch (action) {
    case "revoke":
      change = (r) => {
        r.revoked = true;
      };
      break;
    case "expire": {
      const at = Date.parse(parseBody(schemas.expire, body).at);
      change = (r) => {
        r.expiresAt = at;
      };
      break;
    }
    case "theta": {
      const t = parseBody(schemas.theta, body);
      change = (r) => {
        // A new settings object (records are shared shallowly, never changed in place below the top level).
        const old = familySettings(r, THETA);
        r.families = {
          ...r.families,
          [THETA]: {
            paused: t.paused ?? old.paused,
            hourlyRequests: t.hourly_requests === undefined ? old.hourlyRequests : t.hourly_requests,
            dailyRequests: t.daily_requests === undefined ? old.dailyRequests : t.daily_requests,
          },
        };
      };
      break;
    }
    case "membership": {
      const m = parseBody(schemas.membership, body).membership;
      change = (r) => {
        r.membership = m;
      };
      break;
    }
    case "caps": {
      const c = parseBody(schemas.caps, body);
      const conv = (v: string | null | undefined, old: bigint | null) =>
        v === undefined ? old : v === null ? null : parseUsd(v);
      change = (r) => {
        r.caps = {
          hourlySpend: conv(c.hourly_spend_usd, r.caps.hourlySpend),
          dailySpend: conv(c.daily_spend_usd, r.caps.dailySpend),
          hourlyReserve: conv(c.hourly_reserve_usd, r.caps.hourlyReserve),
          dailyReserve: conv(c.daily_reserve_usd, r.caps.dailyReserve),
        };
      };
      break;
    }
  }
  const acc = await accounts.update(id, change);
  if (!acc) throw new GatewayError("key_not_found");
  return await keyView(accounts, acc, now);
}

export async function createKey(accounts: Accounts, body: unknown, now: number) {
  const b = parseBody(schemas.create, body);
  const { account, key } = await accounts.create({
    balance: parseUsd(b.balance_usd),
    name: b.name ?? null,
    membership: b.membership ?? null,
  }, now);
  return { ...(await keyView(accounts, account, now)), key };
}

export const KEY_ACTIONS: readonly KeyAction[] = [
  "topup",
  "revoke",
  "expire",
  "suspend",
  "theta",
  "membership",
  "caps",
];
