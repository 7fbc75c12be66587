/**
 * The headers on every response under /dashboard — pages, redirects, assets and errors, routed or
 * not (the server adds them by path, src/http/server.ts): a CSP that allows only the gateway's own script and
 * stylesheet (no inline script or style, no framing, forms posting only here), no referrer, no sniffing, and
 * nothing cached (the pages show money and the session's CSRF token).
 */
export const DASHBOARD_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "cache-control": "no-store",
});

/** Whether a request path is the dashboard's. */
export function isDashboardPath(path: string): boolean {
  return path === "/dashboard" || path.startsWith("/dashboard/");
}
