import assert from "node:assert/strict";
import { CONTENT_CHUNKS, STREAM_FRAMES, streamFrames } from "./chat_mock.ts";

Deno.test("chat mock: 20 content chunks, the finish, the usage chunk and [DONE], each one SSE frame", () => {
  const frames = streamFrames();
  assert.equal(frames.length, STREAM_FRAMES);
  assert.ok(frames.every((f) => f.startsWith("data: ") && f.endsWith("\n\n")));
  const json = frames.slice(0, -1).map((f) => JSON.parse(f.slice(6)));
  const text = json.slice(0, CONTENT_CHUNKS).map((c) => c.choices[0].delta.content).join("");
  assert.equal(text, Array.from({ length: 20 }, (_, i) => `word${i} `).join(""));
  assert.equal(json[0].choices[0].delta.role, "assistant");
  assert.equal(json[CONTENT_CHUNKS].choices[0].finish_reason, "stop");
  assert.deepEqual(json[CONTENT_CHUNKS + 1].usage, {
    prompt_tokens: 12,
    completion_tokens: 20,
    total_tokens: 32,
  });
  assert.equal(frames.at(-1), "data: [DONE]\n\n");
});
