/** Request ids `req_<id>`: a random per-process prefix and a counter — unique, cheap, no syscall per request. */
import { base64url } from "../accounts/api_key.ts";

const prefix = base64url(crypto.getRandomValues(new Uint8Array(9))).replaceAll("-", "x").replaceAll("_", "y");
let counter = 0;

export function newRequestId(): string {
  return `req_${prefix}${(counter++).toString(36).padStart(7, "0")}`;
}
