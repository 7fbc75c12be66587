import assert from "node:assert/strict";
import { isObject, num, str } from "./json.ts";

Deno.test("isObject accepts plain objects only", () => {
  assert.ok(isObject({}));
  assert.ok(isObject({ a: 1 }));
  assert.ok(isObject(Object.create(null)));
  for (const v of [null, undefined, [], [1], "x", 1, true]) assert.equal(isObject(v), false, String(v));
});

Deno.test("str and num read a scalar of their type, else undefined", () => {
  assert.equal(str("a"), "a");
  assert.equal(str(""), "");
  assert.equal(str(1), undefined);
  assert.equal(num(0), 0);
  assert.equal(num(Infinity), undefined);
  assert.equal(num("1"), undefined);
});
