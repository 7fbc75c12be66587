import assert from "node:assert/strict";
import { isObject, num, str } from "../../util/json.ts";
import { absent } from "./util.ts";

Deno.test("value guards", () => {
  assert.equal(isObject({}), true);
  assert.equal(isObject([]), false);
  assert.equal(isObject(null), false);
  assert.equal(str(1), undefined);
  assert.equal(num(Number.NaN), undefined);
  assert.equal(num(3), 3);
  assert.equal(absent(null), true);
  assert.equal(absent(0), false);
});
