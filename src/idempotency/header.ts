/** The `Idempotency-Key` header of a generation request (docs/idempotency.md). */
import { GatewayError } from "../errors/gateway_error.ts";

/** 1–255 visible ASCII characters (no space, no control). */
const VALID = /^[\x21-\x7e]{1,255}$/;

/** The request's key, or undefined without the header; a malformed one is 400 invalid_request. */
export function idempotencyKey(headers: Headers): string | undefined {
  const value = headers.get("idempotency-key");
  if (value === null) return undefined;
  if (!VALID.test(value)) {
    throw new GatewayError("invalid_request", {
      param: "Idempotency-Key",
      detail: "Idempotency-Key: от 1 до 255 видимых символов ASCII, без пробелов.",
    });
  }
  return value;
}
