import assert from "node:assert/strict";
import { ByteSlab, OWN_ARRAYS } from "./byte_slab.ts";

Deno.test("ByteSlab: arrays never overlap, come zeroed, and a kept array gives back only its zeroed end", () => {
  const slab = new ByteSlab(1024);
  const a = slab.take(100);
  a.fill(1);
  const b = slab.take(200);
  assert.equal(a.buffer, b.buffer, "both from one slab");
  assert.equal(b.byteOffset, a.byteOffset + 100);
  assert.ok(b.every((x) => x === 0));
  b.fill(2);
  const kept = slab.keep(b, 50); // the caller wrote past what it keeps: that end is zeroed before it is reused
  assert.equal(kept.length, 50);
  assert.ok(kept.every((x) => x === 2));
  const c = slab.take(150);
  assert.equal(c.byteOffset, b.byteOffset + 50, "the end given back is taken next");
  assert.ok(c.every((x) => x === 0), "nothing written before reaches the next array");
  assert.ok(a.every((x) => x === 1), "an earlier array is untouched");
  // keep() of an array that is not the last one gives nothing back.
  slab.keep(a, 10);
  assert.equal(slab.take(1).byteOffset, c.byteOffset + 150);
});

Deno.test("ByteSlab: a new slab when this one is short; an array above a quarter slab is its own", () => {
  const slab = new ByteSlab(1024);
  const a = slab.take(200);
  const b = slab.take(200);
  const c = slab.take(200);
  const d = slab.take(200);
  const e = slab.take(200);
  const f = slab.take(200); // 1,000 bytes used: 200 more do not fit in 1,024
  assert.equal(a.buffer, e.buffer);
  assert.notEqual(f.buffer, a.buffer);
  assert.equal(f.byteOffset, 0);
  assert.equal(slab.largest, 256);
  const big = slab.take(257);
  assert.equal(big.byteOffset, 0);
  assert.equal(big.buffer.byteLength, 257, "an allocation of its own");
  assert.equal(slab.take(10).buffer, f.buffer, "the slab goes on after it");
  assert.deepEqual([b.length, c.length, d.length], [200, 200, 200]);
});

Deno.test("OWN_ARRAYS: each array its own buffer; keep cuts the view", () => {
  const a = OWN_ARRAYS.take(10);
  assert.equal(a.buffer.byteLength, 10);
  assert.equal(OWN_ARRAYS.keep(a, 4).length, 4);
});
