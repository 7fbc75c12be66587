/** keyBytes (kv_atomic.ts) against Deno KV's own encoding: a commit splits by it, so it must be exact. */
import assert from "node:assert/strict";
import { keyBytes } from "./kv_atomic.ts";

/** Deno KV refuses a written key longer than this many bytes, as encoded. */
const MAX_WRITE_KEY_BYTES = 2048;

/** Strings with every UTF-8 length and the encoding's escapes: NUL, 2-, 3- and 4-byte characters, and lone
 *  surrogates (written as U+FFFD). */
const TRICKY = [
  "",
  "a",
  "\0",
  "a\0\0b",
  "é",
  "日本",
  "😀",
  "\ud83d",
  "\ude00",
  "x\ud83dy",
  "\ude00\ud83d",
  "\u07ff\u0800\uffff",
];

Deno.test("keyBytes: the UTF-8 length of each string, NULs escaped, 9 bytes a number", () => {
  const encoder = new TextEncoder();
  for (const s of TRICKY) {
    const utf8 = encoder.encode(s);
    const nuls = utf8.filter((b) => b === 0).length;
    assert.equal(keyBytes(["usage", s, 7]), 7 + 2 + utf8.length + nuls + 9, JSON.stringify(s));
  }
});

Deno.test("keyBytes: a key of exactly Deno KV's limit is written, one byte more is refused", async () => {
  const kv = await Deno.openKv(":memory:");
  try {
    for (const s of TRICKY) {
      const head = ["usage_hour", s.repeat(20), 12];
      const fill = MAX_WRITE_KEY_BYTES - keyBytes([...head, ""]);
      const key = [...head, "f".repeat(fill)];
      assert.equal(keyBytes(key), MAX_WRITE_KEY_BYTES);
      assert.equal((await kv.atomic().set(key, 1).commit()).ok, true, JSON.stringify(s));
      await assert.rejects(kv.atomic().set([...head, "f".repeat(fill + 1)], 1).commit(), /too large/);
    }
  } finally {
    kv.close();
  }
});
