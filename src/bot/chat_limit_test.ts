import assert from "node:assert/strict";
import { ChatLimit } from "./chat_limit.ts";

Deno.test("ChatLimit: a burst of N per chat, then refused with the wait, told once a minute", () => {
  const limit = new ChatLimit(3);
  const t0 = 1_000_000;
  for (let i = 0; i < 3; i++) assert.deepEqual(limit.admit(1, t0), { ok: true });
  assert.deepEqual(limit.admit(1, t0), { ok: false, retryAfter: 20, tell: true });
  assert.deepEqual(limit.admit(1, t0 + 1_000), { ok: false, retryAfter: 19, tell: false });
  assert.deepEqual(limit.admit(2, t0), { ok: true }, "another chat has its own bucket");
  assert.deepEqual(limit.admit(1, t0 + 20_000), { ok: true }, "one more every 60/N s");
  assert.deepEqual(limit.admit(1, t0 + 20_000), { ok: false, retryAfter: 20, tell: false });
  // Refilled to two by t0 + 61 s; refused again, and told again since a minute has passed.
  assert.deepEqual(limit.admit(1, t0 + 61_000), { ok: true });
  assert.deepEqual(limit.admit(1, t0 + 61_000), { ok: true });
  assert.deepEqual(limit.admit(1, t0 + 61_000), { ok: false, retryAfter: 19, tell: true });
});
