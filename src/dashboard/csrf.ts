/**
 * CSRF protection of the dashboard's forms: every state-changing form carries a hidden `csrf` field
 * whose value is the SHA-256 of a secret the browser holds in an HttpOnly, SameSite=Strict cookie — the session
 * id once signed in (`gw_session`), before that a random sign-in nonce (`gw_csrf`, set with the sign-in form).
 * Another site can neither read the cookie nor, therefore, compute the field; and SameSite=Strict keeps the
 * cookie off its requests to begin with. No server secret is involved, so a form rendered by one gateway
 * process is accepted by every other on the store, and after a restart. A missing or wrong field is 403
 * `csrf_failed`, checked before anything changes.
 */
import { timingSafeEqual } from "../accounts/api_key.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import { toB64Url } from "../util/base64url.ts";

/** The sign-in nonce's cookie. */
export const CSRF_COOKIE = "gw_csrf";
const NONCE = /^[A-Za-z0-9_-]{43}$/;
const TAG = "gw-dashboard-csrf/v1\n";

/** A fresh sign-in nonce (32 random bytes, base64url). */
export function newNonce(): string {
  return toB64Url(crypto.getRandomValues(new Uint8Array(32)));
}

/** Whether a cookie value is a nonce this module issued the shape of (anything else gets a new one). */
export function isNonce(value: string | undefined): value is string {
  return value !== undefined && NONCE.test(value);
}

/** The form field for a secret (the session id or the sign-in nonce): one-way, so the page never reveals it. */
export async function csrfToken(secret: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(TAG + secret));
  return toB64Url(new Uint8Array(digest));
}

/** Refuses (403 csrf_failed) a form whose `csrf` field is not the token of `secret` (or there is no secret). */
export async function checkCsrf(form: URLSearchParams, secret: string | undefined): Promise<void> {
  const sent = form.get("csrf");
  if (secret === undefined || sent === null || !timingSafeEqual(sent, await csrfToken(secret))) {
    throw new GatewayError("csrf_failed");
  }
}
