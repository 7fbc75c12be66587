/** API key format and hashing (spec §5.1): `gd-` + 43 base64url characters (32 random bytes). */
import { toB64Url } from "../util/base64url.ts";

const KEY_RE = /^gd-[A-Za-z0-9_-]{43}$/;

export function isWellFormedKey(key: string): boolean {
  return KEY_RE.test(key);
}

export function generateKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `gd-${toB64Url(bytes)}`;
}

export async function hashKey(key: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A short public hint for operators ("gd-AbCd…"); never enough to use the key. */
export function keyHint(key: string): string {
  return `${key.slice(0, 7)}…`;
}

/** Constant-time string comparison for secrets. */
export function timingSafeEqual(a: string, b: string): boolean {
  const ea = new TextEncoder().encode(a);
  const eb = new TextEncoder().encode(b);
  let diff = ea.length ^ eb.length;
  for (let i = 0; i < Math.max(ea.length, eb.length); i++) diff |= (ea[i] ?? 0) ^ (eb[i] ?? 0);
  return diff === 0;
}
