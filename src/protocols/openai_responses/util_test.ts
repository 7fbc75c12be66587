import assert from "node:assert/strict";
import { absent, isRecord, num, str } from "./util.ts";

Deno.test("value guards", () => {
  assert.equal(isRecord({}), true);
  assert.equal(isRecord([]), false);
  assert.equal(isRecord(null), false);
  assert.equal(str(1), undefined);
  assert.equal(num(Number.NaN), undefined);
  assert.equal(num(3), 3);
  assert.equal(absent(null), true);
  assert.equal(absent(0), false);
});
