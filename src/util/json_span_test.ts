import assert from "node:assert/strict";
import { ObjectEdits, scanObject } from "./json_span.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);
const valueOf = (json: string, key: string) => {
  const raw = enc(json);
  const span = scanObject(raw).spans.get(key);
  return span && dec(raw.subarray(span.start, span.end));
};

Deno.test("scanObject finds each kind of value, only at the top level, and counts every member", () => {
  const json =
    ` { "messages" : [{"role":"user","content":"say \\"system\\": {x}"}], "n": -1.5e3 ,"t":true,"o":{"system":1},` +
    `"s":"a\\\\","system" :  [ {"type":"text","text":"привет ]}"} ] }`;
  assert.equal(valueOf(json, "system"), `[ {"type":"text","text":"привет ]}"} ]`);
  assert.equal(valueOf(json, "messages"), `[{"role":"user","content":"say \\"system\\": {x}"}]`);
  assert.equal(valueOf(json, "n"), "-1.5e3");
  assert.equal(valueOf(json, "t"), "true");
  assert.equal(valueOf(json, "s"), `"a\\\\"`);
  assert.equal(valueOf(json, "o"), `{"system":1}`);
  assert.equal(valueOf(json, "absent"), undefined);
  assert.equal(valueOf(`{}`, "system"), undefined);
  const scan = scanObject(enc(json));
  assert.deepEqual([...scan.spans.keys()], ["messages", "n", "t", "o", "s", "system"]);
  assert.equal(scan.members, 11);
  assert.equal(scan.brace, 1);
  assert.equal(scanObject(enc(`{"a":{"b":[{"c":{}}]},"d":null}`)).members, 4);
});

Deno.test("scanObject: an escaped name is read as JSON.parse reads it, the last of a repeat wins", () => {
  assert.equal(valueOf(`{"\\u0073ystem":"a","system":"b"}`, "system"), `"b"`);
  assert.equal(JSON.parse(`{"\\u0073ystem":"a","system":"b"}`).system, "b");
  assert.equal(valueOf(`{"sys\\"tem":"a"}`, 'sys"tem'), `"a"`);
  // A string's first bytes are read one by one, the rest by indexOf: an escaped quote on either side.
  const long = "x".repeat(40);
  assert.equal(valueOf(`{"a":"${long}\\"${long}\\\\","b":1}`, "b"), "1");
  assert.equal(valueOf(`{"a":"\\"\\\\\\"","b":2}`, "b"), "2");
});

Deno.test("scanObject refuses what is not a whole object", () => {
  assert.throws(() => scanObject(enc(`[1]`)), SyntaxError);
  assert.throws(() => scanObject(enc(`{"a":"b`)), SyntaxError);
  assert.throws(() => scanObject(enc(`{"a":[1`)), SyntaxError);
});

/** Members set on `json` as the gateway sets them (engine/generate.ts `changedMembers`). */
const set = (json: string, changes: Record<string, unknown>) => {
  const raw = enc(json);
  const edits = new ObjectEdits(raw, scanObject(raw));
  for (const [name, value] of Object.entries(changes)) edits.set(name, value);
  return dec(edits.bytes());
};

Deno.test("ObjectEdits replaces and adds top-level members and leaves every other byte as it was", () => {
  const json =
    `{ "model" : "a",\n  "messages":[{"role":"user","content":"x \\"}\\" \\u00e9"}], "stream":true }`;
  const changes = { model: "b", stream_options: { include_usage: true } };
  const out = set(json, changes);
  assert.equal(
    out,
    `{"stream_options":{"include_usage":true}, "model" : "b",\n  "messages":[{"role":"user","content":"x \\"}\\" \\u00e9"}], "stream":true }`,
  );
  assert.deepEqual(JSON.parse(out), { ...JSON.parse(json), ...changes });
  assert.equal(set(` { "m" :1}`, { s: true }), ` {"s":true, "m" :1}`);
  assert.equal(set(`{ }`, { a: 1, b: [2] }), `{"a":1,"b":[2] }`);
  assert.equal(set(`{"\\u0061":1,"b":2}`, { a: 3 }), `{"\\u0061":3,"b":2}`, "an escaped name is found");
});

Deno.test("ObjectEdits: no change gives the same bytes; a first addition goes before the others", () => {
  const raw = enc(`{"a":1}`);
  assert.equal(new ObjectEdits(raw, scanObject(raw)).bytes(), raw);
  const edits = new ObjectEdits(raw, scanObject(raw));
  edits.set("b", 2);
  edits.set("c", 3, true);
  const a = edits.span("a")!;
  edits.replace({ start: a.start, end: a.start }, "1");
  assert.equal(dec(edits.bytes()), `{"c":3,"b":2,"a":11}`);
  assert.equal(edits.text(a), "1");
});

Deno.test("ObjectEdits refuses changes that overlap", () => {
  const raw = enc(`{"a":[1,2]}`);
  const edits = new ObjectEdits(raw, scanObject(raw));
  const a = edits.span("a")!;
  edits.set("a", 3);
  edits.replace({ start: a.start + 1, end: a.start + 1 }, "0,");
  assert.throws(() => edits.bytes(), /overlapping/);
});

Deno.test("scanObject tells whether any name, at any depth, is written with an escape", () => {
  const escaped = (json: string) => scanObject(enc(json)).escapedNames;
  assert.equal(escaped(`{"a":"\\u0041\\\\","b":["\\n"],"c":{"d":"\\""}}`), false, "escapes in values only");
  assert.equal(escaped(`{"\\u0061":1}`), true);
  assert.equal(escaped(`{"a":[{"b":{"c\\n":1}}]}`), true);
  assert.equal(escaped(`{"a":{"${"x".repeat(40)}\\\\":1}}`), true, "past a long name's first bytes");
  assert.equal(escaped(`{"a":{"${"x".repeat(40)}":"\\\\"}}`), false);
});
