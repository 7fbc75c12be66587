import assert from "node:assert/strict";
import { spliceBytes, topLevelValueSpan } from "./json_span.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);
const valueOf = (json: string, key: string) => {
  const raw = enc(json);
  const span = topLevelValueSpan(raw, key);
  return span && dec(raw.subarray(span.start, span.end));
};

Deno.test("topLevelValueSpan finds each kind of value, only at the top level", () => {
  const json =
    ` { "messages" : [{"role":"user","content":"say \\"system\\": {x}"}], "n": -1.5e3 ,"t":true,"o":{"system":1},` +
    `"s":"a\\\\","system" :  [ {"type":"text","text":"привет ]}"} ] }`;
  assert.equal(valueOf(json, "system"), `[ {"type":"text","text":"привет ]}"} ]`);
  assert.equal(valueOf(json, "n"), "-1.5e3");
  assert.equal(valueOf(json, "t"), "true");
  assert.equal(valueOf(json, "s"), `"a\\\\"`);
  assert.equal(valueOf(json, "o"), `{"system":1}`);
  assert.equal(valueOf(json, "absent"), undefined);
  assert.equal(valueOf(`{}`, "system"), undefined);
});

Deno.test("topLevelValueSpan: an escaped key matches, and the last duplicate wins as in JSON.parse", () => {
  assert.equal(valueOf(`{"\\u0073ystem":"a","system":"b"}`, "system"), `"b"`);
  assert.equal(JSON.parse(`{"\\u0073ystem":"a","system":"b"}`).system, "b");
});

Deno.test("spliceBytes replaces exactly the span", () => {
  const raw = enc(`{"a":1,"b":2}`);
  const span = topLevelValueSpan(raw, "a")!;
  assert.equal(dec(spliceBytes(raw, span, `"один"`)), `{"a":"один","b":2}`);
  assert.equal(dec(spliceBytes(raw, { start: 1, end: 1 }, `"z":0,`)), `{"z":0,"a":1,"b":2}`);
});
