import assert from "node:assert/strict";
import { replaySse } from "./sse_parse.ts";

Deno.test("replaySse yields the same frames whatever the byte cuts", async () => {
  const text = 'event: a\ndata: {"x":"é"}\n\n: comment\n\ndata: line1\ndata: line2\n\r\ndata: [DONE]\n\n';
  const whole = await replaySse(text);
  assert.deepEqual(whole, [
    { event: "a", data: '{"x":"é"}' },
    { data: "line1\nline2" },
    { data: "[DONE]" },
  ]);
  const len = new TextEncoder().encode(text).length;
  for (let cut = 1; cut < len; cut++) {
    assert.deepEqual(await replaySse(text, [cut, cut + 3]), whole);
  }
});
