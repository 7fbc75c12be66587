/**
 * Cookies of the dashboard (src/dashboard/): reading one from a Cookie header (RFC 6265 §5.4) and writing a
 * Set-Cookie value that is always HttpOnly and SameSite=Strict, so no page script reads it and no other site's
 * request carries it.
 */

/** The first value of cookie `name` (the browser sends the most specific path first), or undefined. */
export function readCookie(header: string | null, name: string): string | undefined {
  if (header === null) return undefined;
  for (const pair of header.split(";")) {
    const eq = pair.indexOf("=");
    if (eq < 0) continue;
    if (pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
  }
  return undefined;
}

export interface CookieOptions {
  path: string;
  /** Seconds the browser keeps it; 0 deletes it. */
  maxAgeSeconds: number;
  /** Sent only over HTTPS (the request came over HTTPS). */
  secure: boolean;
}

/** A Set-Cookie value. `value` must already be cookie-safe (base64url here). */
export function setCookie(name: string, value: string, opts: CookieOptions): string {
  return `${name}=${value}; Path=${opts.path}; Max-Age=${opts.maxAgeSeconds}; HttpOnly; SameSite=Strict` +
    (opts.secure ? "; Secure" : "");
}
