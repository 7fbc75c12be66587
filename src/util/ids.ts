/**
 * The one id generator (request ids `req_…`, message and response ids): a random per-process prefix and a
 * counter — unique, cheap, no syscall per id. Built once in gateway.ts and injected as `App.newId`.
 * Not for secrets or anything that must be unguessable (file ids and keys use their own random bytes).
 */
import { toB64Url } from "./base64url.ts";

export function idGenerator(): (prefix: string) => string {
  const stem = toB64Url(crypto.getRandomValues(new Uint8Array(9))).replaceAll("-", "x").replaceAll("_", "y");
  let counter = 0;
  return (prefix) => `${prefix}${stem}${(counter++).toString(36).padStart(7, "0")}`;
}
