/**
 * The request fingerprint (fingerprint.ts): the same parsed body under another key order or other whitespace is
 * the same request; another value, array order, path or surface is not. A body that is not JSON, or nests past
 * MAX_BODY_DEPTH, is hashed as its bytes without being walked. canonicalJson's exact text.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { canonicalJson, requestFingerprint } from "./fingerprint.ts";
import { MAX_BODY_DEPTH } from "../util/json_depth.ts";

const bytes = (s: string) => new TextEncoder().encode(s);
const fp = (body: string, surface = "chat", path = "/v1/chat/completions") =>
  requestFingerprint(surface, path, bytes(body));
/** What a body hashed as its bytes must give: computed here, apart from the code under test. */
const rawHash = (surface: string, path: string, body: Uint8Array) =>
  createHash("sha256").update(`${surface}\n${path}\nraw\n`).update(body).digest("hex");

const BODY = '{"model":"k3","stream":true,"messages":[{"role":"user","content":"привет"}],"max_tokens":200}';

Deno.test("requestFingerprint: key order and whitespace do not matter, nor how a value is spelled", () => {
  const base = fp(BODY);
  assert.match(base, /^[0-9a-f]{64}$/);
  assert.equal(
    fp(
      '{ "max_tokens" : 200,\n\t"messages":[ {"content":"привет","role":"user"} ] ,"stream":true,"model":"k3" }',
    ),
    base,
  );
  // The parsed value is what counts: an escaped letter, 200.0 and 2e2 are the same value.
  assert.equal(
    fp('{"model":"k\\u0033","stream":true,"messages":[{"role":"user","content":"привет"}],"max_tokens":2e2}'),
    base,
  );
  assert.equal(fp(BODY.replace("200", "200.0")), base);
});

Deno.test("requestFingerprint: a changed value, array order, path or surface is another request", () => {
  const base = fp(BODY);
  const others = [
    fp(BODY.replace('"k3"', '"k4"')),
    fp(BODY.replace("привет", "привет!")),
    fp(BODY.replace("true", "false")),
    fp(BODY.replace("200", '"200"')),
    fp(BODY.replace('"max_tokens":200', '"max_tokens":200,"n":null')),
    fp(
      '{"model":"k3","stream":true,"messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}',
    ),
    fp(
      '{"model":"k3","stream":true,"messages":[{"role":"user","content":"b"},{"role":"user","content":"a"}]}',
    ),
    fp(BODY, "chat", "/theta/v1/chat/completions"),
    fp(BODY, "responses", "/v1/chat/completions"),
  ];
  assert.equal(new Set([base, ...others]).size, others.length + 1);
});

Deno.test("requestFingerprint: a body that is not JSON is its bytes, byte for byte", () => {
  for (const body of ["not json", '{"model":"k3",', "", "\xff\xfe"]) {
    const raw = bytes(body);
    assert.equal(
      requestFingerprint("messages", "/v1/messages", raw),
      rawHash("messages", "/v1/messages", raw),
    );
  }
  const invalidUtf8 = new Uint8Array([0x7b, 0xff, 0x7d]);
  assert.equal(requestFingerprint("chat", "/p", invalidUtf8), rawHash("chat", "/p", invalidUtf8));
  // Bytes, not a parse: other whitespace around the same broken text is another request.
  assert.notEqual(fp("{oops}"), fp("{ oops }"));
  // A JSON body never hashes the same as its own bytes taken raw.
  assert.notEqual(fp(BODY), rawHash("chat", "/v1/chat/completions", bytes(BODY)));
});

Deno.test("requestFingerprint: a body nested past MAX_BODY_DEPTH is its bytes, not walked", () => {
  const nest = (depth: number, inner = "1", sep = "") =>
    "[".repeat(depth) + sep + inner + sep + "]".repeat(depth);
  // At the bound: JSON, canonical (whitespace does not matter).
  assert.equal(fp(nest(MAX_BODY_DEPTH, "1", " ")), fp(nest(MAX_BODY_DEPTH)));
  assert.notEqual(
    fp(nest(MAX_BODY_DEPTH)),
    rawHash("chat", "/v1/chat/completions", bytes(nest(MAX_BODY_DEPTH))),
  );
  // One past it: bytes (whitespace matters).
  const past = nest(MAX_BODY_DEPTH + 1);
  assert.equal(fp(past), rawHash("chat", "/v1/chat/completions", bytes(past)));
  assert.notEqual(fp(nest(MAX_BODY_DEPTH + 1, "1", " ")), fp(past));
  // So deep that a recursive walk overflows the stack: the fingerprint is still its bytes' hash.
  const hostile = nest(200_000);
  assert.throws(() => canonicalJson(JSON.parse(hostile)), RangeError, "the walk this test proves is skipped");
  assert.equal(fp(hostile), rawHash("chat", "/v1/chat/completions", bytes(hostile)));
});

Deno.test("canonicalJson: members sorted at every level, arrays in order, strings escaped as JSON", () => {
  const value = {
    z: [3, [2, { y: "b", x: "a" }], []],
    a: { "é": true, "B": null, "_": 1.5, "a": {} },
    s: 'quote " backslash \\ newline \n tab \t ctl \u0001 slash / snow ☃',
    "\uffff": 0,
    "😀": -0,
  };
  const text = canonicalJson(value);
  assert.equal(
    text,
    '{"a":{"B":null,"_":1.5,"a":{},"é":true},' +
      '"s":"quote \\" backslash \\\\ newline \\n tab \\t ctl \\u0001 slash / snow ☃",' +
      '"z":[3,[2,{"x":"a","y":"b"}],[]],' +
      // UTF-16 order: the emoji's high surrogate (0xD83D) sorts before U+FFFF.
      '"😀":0,"\uffff":0}',
  );
  assert.deepEqual(JSON.parse(text), { ...value, "😀": 0 });
  assert.equal(canonicalJson("x\u2028y"), JSON.stringify("x\u2028y"));
  assert.equal(canonicalJson([null, false, "", 0]), '[null,false,"",0]');
});
