import assert from "node:assert/strict";
import { GatewayError } from "../../errors/gateway_error.ts";
import { array, nonEmptyString, object, optBoolean, optInteger, optNumber } from "./validate.ts";

function param(fn: () => unknown): string | null {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof GatewayError);
    assert.equal(e.code, "invalid_request");
    return e.param;
  }
  return null;
}

Deno.test("validators throw invalid_request naming the param", () => {
  assert.equal(param(() => object([], "a")), "a");
  assert.equal(param(() => array({}, "b")), "b");
  assert.equal(param(() => nonEmptyString("", "c")), "c");
  assert.equal(param(() => optBoolean(1, "d")), "d");
  assert.equal(param(() => optNumber(Number.NaN, "e", 0, 1)), "e");
  assert.equal(param(() => optInteger(-1, "f", 0)), "f");
  assert.equal(param(() => optInteger(undefined, "g", 0)), null);
});
