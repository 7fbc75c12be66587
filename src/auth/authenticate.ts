/** spec §5: key extraction and key states. Theta pause is checked later, once the model is known. */
import type { Account, Accounts } from "../accounts/accounts.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import { hashKey, isWellFormedKey } from "../accounts/api_key.ts";

/**
 * `Authorization: Bearer <key>`: the scheme (case-insensitive, RFC 9110 spec §11.1), one or more spaces or
 * tabs, the key — nothing else. Not `\s`/`trim()`: those also accept a no-break space, U+2028 and the
 * like, so `Bearer\u00a0<key>` or `<key>\u00a0` would authenticate.
 */
const BEARER = /^Bearer[ \t]+([^ \t]+)$/i;

/** The token of an exact `Bearer <token>` header value, or undefined (also for the operator token). */
export function bearerToken(value: string | null): string | undefined {
  return value === null ? undefined : BEARER.exec(value)?.[1];
}

/**
 * The key from `x-api-key` or `Authorization: Bearer` (both accepted on every surface), matched
 * exactly. HTTP strips spaces and tabs around a header value before we see it; any other character
 * around the key makes it an invalid key (never a missing one).
 */
export function extractKey(headers: Headers): string | undefined {
  const xKey = headers.get("x-api-key");
  if (xKey !== null && xKey !== "") return xKey;
  const auth = headers.get("authorization");
  if (auth === null || auth === "") return undefined;
  // A present but malformed Authorization header is an invalid key, not a missing one.
  return bearerToken(auth) ?? auth;
}

/**
 * The account of a presented key, whatever its state; undefined for a malformed or unknown key. A known key is
 * not hashed again (Accounts' bounded cache). Shared with the dashboard's sign-in (src/dashboard/).
 */
export async function findKey(key: string, accounts: Accounts): Promise<Account | undefined> {
  if (!isWellFormedKey(key)) return undefined;
  return accounts.byKey(key) ?? accounts.rememberKey(key, await accounts.findByHash(await hashKey(key)));
}

export async function authenticate(headers: Headers, accounts: Accounts, now = Date.now()): Promise<Account> {
  const key = extractKey(headers);
  if (key === undefined) throw new GatewayError("missing_api_key");
  const acc = await findKey(key, accounts);
  if (!acc) throw new GatewayError("invalid_api_key");
  const rec = acc.rec;
  if (rec.revoked) throw new GatewayError("api_key_revoked");
  if (rec.expiresAt !== null && rec.expiresAt <= now) throw new GatewayError("api_key_expired");
  if (rec.suspendedUntil !== null && rec.suspendedUntil > now) {
    throw new GatewayError("api_key_suspended", { retryAfter: Math.ceil((rec.suspendedUntil - now) / 1000) });
  }
  return acc;
}

/** spec §9.2: any well-formed date is served as 2023-06-01, so unmodified official SDKs (which send newer dates) work. */
export function checkAnthropicVersion(headers: Headers): void {
  const v = headers.get("anthropic-version");
  if (v === null) {
    throw new GatewayError("invalid_request", {
      param: "anthropic-version",
      detail: "Нет заголовка anthropic-version.",
    });
  }
  if (!/^\d{4}-\d{2}-\d{2}$/.test(v.trim())) {
    throw new GatewayError("invalid_request", {
      param: "anthropic-version",
      detail: "Заголовок anthropic-version должен быть датой вида 2023-06-01.",
    });
  }
}
