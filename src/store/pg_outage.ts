/**
 * Which failures of the `postgres` client mean "the database cannot be reached now" (unavailable.ts): the
 * connection could not be made, or was lost, or the server refuses work while it starts or stops. SQLSTATE
 * class 08 (connection exception), 57P01–57P03 (admin shutdown, crash shutdown, cannot connect now) and
 * 53300 (too many connections); the client's own codes for sockets and connections.
 */
const CLIENT_CODES = new Set([
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENOTFOUND",
]);
const SERVER_CODES = new Set(["57P01", "57P02", "57P03", "53300"]);

export function isPgOutage(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return false;
  return CLIENT_CODES.has(code) || SERVER_CODES.has(code) || code.startsWith("08");
}
