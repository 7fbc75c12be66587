/** The GatewayError `fn` throws (fails the test when it returns or throws anything else). */
import assert from "node:assert/strict";
import { GatewayError } from "../gateway_error.ts";

export function thrownGatewayError(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (e) {
    if (e instanceof GatewayError) return e;
    throw e;
  }
  assert.fail("expected a GatewayError");
}
