/**
 * The key holder's dashboard sessions: signing in with the key gives a random session id, which
 * lives only in the browser's `gw_session` cookie; the store keeps its SHA-256 with the key id and the expiry
 * (Store.putSession), so every process on the store knows it and a sign-out ends it everywhere. A session is
 * good while it has not expired, its key is not revoked and still has the secret it signed in with (a key
 * rotated because it leaked ends its sessions too): an expired, suspended or paused key, or one with no
 * balance left, still signs in, so its holder can see what happened.
 */
import type { Account, Accounts } from "../accounts/accounts.ts";
import { hashKey } from "../accounts/api_key.ts";
import type { KeyStore, SessionStore } from "../store/store.ts";
import { toB64Url } from "../util/base64url.ts";

export const SESSION_COOKIE = "gw_session";
/** 32 random bytes, base64url: what a cookie value must look like before anything is hashed or read. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

export interface Session {
  /** The id from the cookie (secret: never logged, never shown; the dashboard derives its CSRF token from it). */
  id: string;
  account: Account;
  /** Unix ms. */
  expiresAt: number;
}

/** The store's name for a session: the SHA-256 (hex) of its id, as for keys. */
const sessionHash = (id: string): Promise<string> => hashKey(id);

/** Whether a key may hold a session: every state but revoked. */
export const maySignIn = (acc: Account): boolean => !acc.rec.revoked;

/** Starts a session of `acc` for `ttlMs`; returns its id (for the cookie) and expiry. */
export async function startSession(
  store: KeyStore & SessionStore,
  acc: Account,
  now: number,
  ttlMs: number,
): Promise<{ id: string; expiresAt: number }> {
  const id = toB64Url(crypto.getRandomValues(new Uint8Array(32)));
  const expiresAt = now + ttlMs;
  await store.putSession({
    hash: await sessionHash(id),
    keyId: acc.rec.id,
    keyHash: acc.rec.hash,
    createdAt: now,
    expiresAt,
  });
  return { id, expiresAt };
}

/** The live session a cookie value names, or undefined (none, malformed, unknown, expired, its key revoked or
 *  rotated since). */
export async function findSession(
  store: KeyStore & SessionStore,
  accounts: Accounts,
  id: string | undefined,
  now: number,
): Promise<Session | undefined> {
  if (id === undefined || !SESSION_ID.test(id)) return undefined;
  const rec = await store.getSession(await sessionHash(id), now);
  if (!rec) return undefined;
  const account = await accounts.find(rec.keyId);
  if (!account || !maySignIn(account) || account.rec.hash !== rec.keyHash) return undefined;
  return { id, account, expiresAt: rec.expiresAt };
}

/** Ends a session on every process (sign-out). */
export async function endSession(store: KeyStore & SessionStore, session: Session): Promise<void> {
  await store.deleteSession(await sessionHash(session.id));
}
