import assert from "node:assert/strict";
import { bodyFraming, lenientChunked, lenientLength, strictChunked, strictLength } from "./framing.ts";
import { Http1Failure } from "./failure.ts";

Deno.test("http1 framing: RFC 9112 §6.3's order — no body, chunked over a length, a length, to the end", () => {
  for (const status of [100, 199, 204, 304]) {
    assert.deepEqual(bodyFraming(status, true, "5"), { kind: "none" });
  }
  assert.deepEqual(bodyFraming(200, true, "5"), { kind: "chunked" });
  assert.deepEqual(bodyFraming(404, false, "5"), { kind: "length", length: 5 });
  assert.deepEqual(bodyFraming(200, false, undefined), { kind: "close" });
});

Deno.test("http1 framing: strict fields are one number and chunked once; lenient ones as Fetch joins them", () => {
  assert.equal(strictLength("7", undefined), "7");
  assert.equal(strictLength("7", "7"), "7");
  for (const [value, before] of [["7", "8"], ["7, 7", undefined], ["", undefined], ["0x1", undefined]]) {
    assert.throws(() => strictLength(value!, before), Http1Failure, value);
  }
  assert.equal(strictChunked("Chunked", false), true);
  for (const [value, before] of [["chunked", true], ["gzip, chunked", false], ["gzip", false]] as const) {
    assert.throws(() => strictChunked(value, before), Http1Failure, value);
  }
  assert.equal(lenientLength(["7, 7", "7"]), "7");
  for (const values of [["7", "8"], ["7, "], ["x"]]) assert.throws(() => lenientLength(values), Http1Failure);
  assert.equal(lenientChunked(["gzip", "br, Chunked "]), true);
  assert.equal(lenientChunked(["chunked", "gzip"]), false);
});
