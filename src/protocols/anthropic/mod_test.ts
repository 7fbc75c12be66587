import assert from "node:assert/strict";
import { replaySse } from "../sse_parse.ts";
import { anthropic } from "./mod.ts";
import { fixture, testContext } from "./testing/helpers.ts";

Deno.test("anthropic protocol wires decode → encode end to end", async () => {
  assert.equal(anthropic.name, "anthropic");
  assert.equal(anthropic.upstreamPath, "/v1/messages");
  const req = anthropic.decodeRequest({
    model: "alpha-large",
    max_tokens: 100,
    messages: [{ role: "user", content: "hi" }],
  });
  const body = anthropic.encodeRequest(req, { upstreamModel: "claude-sonnet-4-5", defaultMaxTokens: 4096 });
  assert.deepEqual(body.messages, [{ role: "user", content: [{ type: "text", text: "hi" }] }]);

  const decoder = anthropic.createStreamDecoder();
  const encoder = anthropic.createStreamEncoder(testContext(req));
  let out = "";
  for (const frame of await replaySse(fixture("text.sse"))) {
    for (const event of decoder.push(frame)) out += encoder.push(event);
  }
  const types = (await replaySse(out)).map((f) => f.event);
  assert.deepEqual(types, [
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
  ]);
});
