import assert from "node:assert/strict";
import { jsonDepthExceeds, membersWithinDepth } from "./json_depth.ts";

const nest = (levels: number): unknown => {
  let v: unknown = "leaf";
  for (let i = 0; i < levels; i++) v = i % 2 ? [v] : { a: v };
  return v;
};

Deno.test("jsonDepthExceeds counts objects and arrays, the top level being 1", () => {
  assert.equal(jsonDepthExceeds({}, 1), false);
  assert.equal(jsonDepthExceeds({ a: {} }, 1), true);
  assert.equal(jsonDepthExceeds(nest(100), 100), false);
  assert.equal(jsonDepthExceeds(nest(101), 100), true);
  assert.equal(jsonDepthExceeds({ a: "x", b: [1, 2, { c: null }] }, 3), false);
  assert.equal(jsonDepthExceeds({ a: "x", b: [1, 2, { c: [] }] }, 3), true);
  // Scalars nest nothing; a deep branch is found after shallow siblings, in objects and arrays alike.
  assert.equal(jsonDepthExceeds("text", 0), false);
  assert.equal(jsonDepthExceeds(null, 0), false);
  assert.equal(jsonDepthExceeds([1, "a", true, null], 1), false);
  assert.equal(jsonDepthExceeds([{}, [], { a: 1 }, [[[]]]], 3), true);
  assert.equal(jsonDepthExceeds({ a: {}, b: { c: { d: {} } }, e: 1 }, 3), true);
  assert.equal(jsonDepthExceeds({ a: {}, b: { c: { d: 1 } }, e: 1 }, 3), false);
});

Deno.test("membersWithinDepth counts the members every object kept, or -1 past the bound", () => {
  assert.equal(membersWithinDepth({}, 1), 0);
  assert.equal(membersWithinDepth({ a: 1, b: { c: [{ d: 1, e: {} }, "x"] } }, 5), 5);
  assert.equal(membersWithinDepth(JSON.parse(`{"a":1,"a":{"b":2}}`), 3), 2, "a repeat is kept once");
  assert.equal(membersWithinDepth([[{ a: 1 }], { b: 2 }], 3), 2);
  assert.equal(membersWithinDepth("text", 0), 0);
  assert.equal(membersWithinDepth(nest(101), 100), -1);
  assert.equal(membersWithinDepth(nest(100), 100), 50); // every other level an object
});
