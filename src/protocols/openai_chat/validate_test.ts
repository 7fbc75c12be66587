import assert from "node:assert/strict";
import { GatewayError } from "../../errors/gateway_error.ts";
import { isObject } from "../../util/json.ts";
import { fail, optBoolean, optString } from "./validate.ts";

Deno.test("isObject accepts plain objects only", () => {
  assert.equal(isObject({}), true);
  assert.equal(isObject([]), false);
  assert.equal(isObject(null), false);
  assert.equal(isObject("x"), false);
});

Deno.test("optString and optBoolean treat null as absent and refuse other types", () => {
  assert.equal(optString({ a: null }, "a", "p"), undefined);
  assert.equal(optString({ a: "x" }, "a", "p"), "x");
  assert.equal(optBoolean({}, "a", "p"), undefined);
  assert.equal(optBoolean({ a: false }, "a", "p"), false);
  assert.throws(
    () => optBoolean({ a: 1 }, "a", "p.q"),
    (e: unknown) => e instanceof GatewayError && e.param === "p.q",
  );
});

Deno.test("fail throws a GatewayError with the given code", () => {
  assert.throws(
    () => fail("max_tokens", "invalid_parameter"),
    (e: unknown) => e instanceof GatewayError && e.code === "invalid_parameter" && e.status === 400,
  );
});
