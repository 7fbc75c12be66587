import assert from "node:assert/strict";
import { replaySse } from "../sse_parse.ts";
import { openaiChat } from "./mod.ts";
import { dataFrames, fixture, testCtx } from "./testing/helpers.ts";

Deno.test("openaiChat identifies itself", () => {
  assert.equal(openaiChat.name, "openai_chat");
  assert.equal(openaiChat.upstreamPath, "/v1/chat/completions");
});

Deno.test("openaiChat decoder → encoder round trip keeps tool calls and usage", async () => {
  const dec = openaiChat.createStreamDecoder();
  const enc = openaiChat.createStreamEncoder(testCtx({ includeUsage: true }));
  let out = "";
  for (const f of await replaySse(await fixture("parallel_tool_calls.sse"))) {
    for (const e of dec.push(f)) out += enc.push(e);
  }
  for (const e of dec.end()) out += enc.push(e);
  const frames = dataFrames(out);
  assert.equal(frames.at(-1), "[DONE]");
  const args = new Map<number, string>();
  for (const f of frames) {
    if (typeof f === "string") continue;
    const choice =
      (f as { choices: { delta: { tool_calls?: { index: number; function: { arguments: string } }[] } }[] })
        .choices[0];
    for (const tc of choice?.delta.tool_calls ?? []) {
      args.set(tc.index, (args.get(tc.index) ?? "") + tc.function.arguments);
    }
  }
  assert.deepEqual(Object.fromEntries(args), { 0: '{"city": "Paris"}', 1: '{"tz":"CET"}' });
});

Deno.test("openaiChat request decode → encode round trip", () => {
  const body = {
    model: "gw",
    messages: [
      { role: "system", content: "s" },
      { role: "user", content: "q" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "call_1", content: "r" },
    ],
    stream: true,
  };
  const out = openaiChat.encodeRequest(openaiChat.decodeRequest(body), {
    upstreamModel: "up",
    defaultMaxTokens: 1,
  });
  assert.deepEqual(out, { ...body, model: "up", stream_options: { include_usage: true } });
});
