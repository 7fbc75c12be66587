import assert from "node:assert/strict";
import { setMembers, spliceBytes, topLevelValueSpan } from "./json_span.ts";

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

/** setMembers on `json`, as the gateway calls it (with what the bytes parse to). */
const set = (json: string, changes: Record<string, unknown>) => {
  const out = setMembers(enc(json), JSON.parse(json), changes);
  return out && dec(out);
};

Deno.test("setMembers replaces and adds top-level members and leaves every other byte as it was", () => {
  const json =
    `{ "model" : "a",\n  "messages":[{"role":"user","content":"x \\"}\\" \\u00e9"}], "stream":true }`;
  const changes = { model: "b", stream_options: { include_usage: true } };
  const out = set(json, changes)!;
  assert.equal(
    out,
    `{"stream_options":{"include_usage":true}, "model" : "b",\n  "messages":[{"role":"user","content":"x \\"}\\" \\u00e9"}], "stream":true }`,
  );
  assert.deepEqual(JSON.parse(out), { ...JSON.parse(json), ...changes });
  // Only additions: nothing to find, the bytes are not scanned.
  assert.equal(set(` { "m" :1}`, { s: true }), ` {"s":true, "m" :1}`);
  assert.equal(set(`{ }`, { a: 1, b: [2] }), `{"a":1,"b":[2] }`);
  assert.equal(set(`{"a":1}`, {}), `{"a":1}`);
  assert.equal(set(`{"\\u0061":1,"b":2}`, { a: 3 }), `{"\\u0061":3,"b":2}`, "an escaped name is found");
});

Deno.test("setMembers declines a member the bytes hold twice, and a removal", () => {
  assert.equal(set(`{"model":"a","model":"b"}`, { model: "c" }), undefined);
  assert.equal(set(`{"x":1,"x":2,"model":"a"}`, { model: "c" }), `{"x":1,"x":2,"model":"c"}`);
  assert.equal(set(`{"model":"a"}`, { model: undefined }), undefined);
});
