import assert from "node:assert/strict";
import { openaiResponses } from "./mod.ts";
import { testCtx } from "./testing/helpers.ts";

Deno.test("protocol object: name, path, and a request → upstream → response round trip", () => {
  assert.equal(openaiResponses.name, "openai_responses");
  assert.equal(openaiResponses.upstreamPath, "/v1/responses");
  const req = openaiResponses.decodeRequest({
    model: "alias",
    input: "hi",
    tools: [{ type: "function", name: "f" }],
  });
  const body = openaiResponses.encodeRequest(req, { upstreamModel: "real", defaultMaxTokens: 1024 });
  assert.equal(body.model, "real");
  assert.deepEqual((body.tools as { strict: boolean }[])[0]!.strict, false);
  const ir = openaiResponses.decodeResponse({
    object: "response",
    status: "completed",
    output: [{ type: "message", content: [{ type: "output_text", text: "hello" }] }],
  });
  const out = openaiResponses.encodeResponse(ir, testCtx(req, "alias"));
  assert.equal(out.model, "alias");
  assert.deepEqual((out.output as { content: { text: string }[] }[])[0]!.content[0]!.text, "hello");
});
