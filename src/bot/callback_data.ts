/**
 * The bot's own callback data: compact (Telegram allows 64 bytes), and validated on the way back, since a
 * client can send any callback data it likes. A decoded reference (a key, a package) is only a claim:
 * every key action still checks the key belongs to the chat (ownership.ts).
 */

/** Ids as the shop and the key table make them (`key_…`, package and payment ids). */
const ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$/;
/** The four caps of a key (src/accounts/key_operations.ts schemas.caps). */
export const CAP_FIELDS = [
  "hourly_spend_usd",
  "daily_spend_usd",
  "hourly_reserve_usd",
  "daily_reserve_usd",
] as const;
export type CapField = typeof CAP_FIELDS[number];

export type Callback =
  /** Open the purchase (the low-balance alert's "Пополнить"). */
  | { a: "buy" }
  /** A package chosen. */
  | { a: "pkg"; pkg: string }
  /** A package and the key it tops up chosen (a chat with several keys). */
  | { a: "pkgkey"; pkg: string; key: string }
  /** A payment method chosen; key null: the chat's first purchase issues a key. */
  | { a: "pay"; pkg: string; key: string | null; method: string }
  | { a: "rotate"; key: string }
  | { a: "rotate_yes"; key: string }
  | { a: "revoke"; key: string }
  | { a: "revoke_yes"; key: string }
  /** A confirmation declined. */
  | { a: "cancel" }
  | { a: "caps"; key: string }
  | { a: "cap_set"; key: string; field: CapField }
  | { a: "theta"; key: string }
  | { a: "theta_set"; key: string; paused: boolean }
  | { a: "alerts"; key: string }
  | { a: "alert_set"; key: string };

type Action = Callback["a"];

/** Each action's wire tag (short: the 64 bytes go to ids) and its argument names in order. */
const WIRE: Record<Action, { tag: string; args: readonly string[] }> = {
  buy: { tag: "b", args: [] },
  pkg: { tag: "p", args: ["pkg"] },
  pkgkey: { tag: "pk", args: ["pkg", "key"] },
  pay: { tag: "m", args: ["pkg", "key", "method"] },
  rotate: { tag: "r", args: ["key"] },
  rotate_yes: { tag: "ry", args: ["key"] },
  revoke: { tag: "x", args: ["key"] },
  revoke_yes: { tag: "xy", args: ["key"] },
  cancel: { tag: "n", args: [] },
  caps: { tag: "c", args: ["key"] },
  cap_set: { tag: "cs", args: ["key", "field"] },
  theta: { tag: "t", args: ["key"] },
  theta_set: { tag: "ts", args: ["key", "paused"] },
  alerts: { tag: "a", args: ["key"] },
  alert_set: { tag: "as", args: ["key"] },
};
const BY_TAG = new Map(Object.entries(WIRE).map(([action, w]) => [w.tag, action as Action]));
/** A `pay` without a key (first purchase) carries this in the key's place. */
const NO_KEY = "-";
const MAX_BYTES = 64;

/** The wire form of an argument value. */
function wireValue(name: string, value: unknown): string {
  if (name === "key" && value === null) return NO_KEY;
  if (name === "field") return String(CAP_FIELDS.indexOf(value as CapField));
  if (name === "paused") return value ? "1" : "0";
  return String(value);
}

/** Parses one argument; undefined when the value is not one this bot could have sent. */
function parseValue(action: Action, name: string, raw: string): unknown {
  if (name === "field") return /^[0-3]$/.test(raw) ? CAP_FIELDS[Number(raw)] : undefined;
  if (name === "paused") return raw === "1" ? true : raw === "0" ? false : undefined;
  if (name === "key" && action === "pay" && raw === NO_KEY) return null;
  return ID.test(raw) ? raw : undefined;
}

export function encodeCallback(cb: Callback): string {
  const w = WIRE[cb.a];
  const values = w.args.map((name) => wireValue(name, (cb as unknown as Record<string, unknown>)[name]));
  const data = [w.tag, ...values].join(":");
  // Ids are bounded (ID), so only an unexpectedly long id gets here: a bug, not a user's doing.
  if (new TextEncoder().encode(data).length > MAX_BYTES) {
    throw new RangeError(`callback data over 64 bytes: ${cb.a}`);
  }
  return data;
}

/** The callback this bot sent, or null for anything else (forged, stale from an older bot, garbled). */
export function decodeCallback(data: string): Callback | null {
  if (data.length > MAX_BYTES) return null;
  const [tag, ...raw] = data.split(":");
  const action = BY_TAG.get(tag ?? "");
  if (action === undefined) return null;
  const names = WIRE[action].args;
  if (raw.length !== names.length) return null;
  const cb: Record<string, unknown> = { a: action };
  for (let i = 0; i < names.length; i++) {
    const value = parseValue(action, names[i]!, raw[i]!);
    if (value === undefined) return null;
    cb[names[i]!] = value;
  }
  return cb as Callback;
}
