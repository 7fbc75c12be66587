import assert from "node:assert/strict";
import { ObjectEdits, scanObject } from "../../util/json_span.ts";
import { prefixSystem, prefixSystemBytes } from "./system_prefix.ts";

const P = "Отвечай по-русски.";
const PROMPT_BLOCK = { type: "text", text: P };

/** Both forms give the same body; the bytes form keeps the client's own bytes around the change. */
function both(json: string) {
  const body = JSON.parse(json);
  const raw = new TextEncoder().encode(json);
  const bytes = new TextDecoder().decode(prefixSystemBytes(new ObjectEdits(raw, scanObject(raw)), body, P));
  assert.deepEqual(JSON.parse(bytes), prefixSystem(body, P), json);
  return { bytes, parsed: JSON.parse(bytes) };
}

Deno.test("prefixSystem: no system → the prompt is the system", () => {
  const { bytes } = both(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`);
  assert.equal(
    bytes,
    `{"system":"Отвечай по-русски.","model":"m","messages":[{"role":"user","content":"hi"}]}`,
  );
  both(`{"model":"m","system":"","messages":[]}`);
  both(`{"model":"m","system":null,"messages":[]}`);
  both(`{"model":"m","system":[],"messages":[]}`);
});

Deno.test("prefixSystem: the string form becomes two blocks, the client's text unchanged", () => {
  const { bytes, parsed } = both(`{"model":"m", "system" : "Будь \\"краток\\"\\n", "messages":[]}`);
  assert.deepEqual(parsed.system, [PROMPT_BLOCK, { type: "text", text: 'Будь "краток"\n' }]);
  assert.ok(bytes.includes(`{"type":"text","text":"Будь \\"краток\\"\\n"}`), "the client's escapes are kept");
});

Deno.test("prefixSystem: the block form gets the prompt first; cache_control and formatting untouched", () => {
  const client = `[ {"type": "text", "text": "x-anthropic-billing-header: cc"},\n` +
    `  {"type":"text","text":"Ты агент","cache_control":{"type":"ephemeral","ttl":"1h"}} ]`;
  const json = `{"messages":[{"role":"user","content":"system"}],"system":${client},"max_tokens":5}`;
  const { bytes, parsed } = both(json);
  assert.equal(
    bytes,
    `{"messages":[{"role":"user","content":"system"}],"system":[{"type":"text","text":"Отвечай по-русски."},` +
      client.slice(1) + `,"max_tokens":5}`,
  );
  assert.deepEqual(parsed.system[2].cache_control, { type: "ephemeral", ttl: "1h" });
});
