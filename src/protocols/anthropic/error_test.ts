import assert from "node:assert/strict";
import { errorFrame, parseUpstreamError } from "./error.ts";

Deno.test("parseUpstreamError reads Anthropic, OpenAI-ish, detail and plain-text bodies", () => {
  assert.deepEqual(
    parseUpstreamError(
      529,
      '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}',
    ),
    { message: "Overloaded", type: "overloaded_error" },
  );
  assert.deepEqual(
    parseUpstreamError(400, '{"error":{"message":"bad","type":"invalid_request_error","code":"x"}}'),
    { message: "bad", type: "invalid_request_error", code: "x" },
  );
  assert.deepEqual(parseUpstreamError(422, '{"detail":"Field required"}'), { message: "Field required" });
  assert.deepEqual(parseUpstreamError(422, '{"detail":[{"loc":["a"]}]}'), { message: '[{"loc":["a"]}]' });
  assert.deepEqual(parseUpstreamError(502, "<html>Bad Gateway</html>\n"), {
    message: "<html>Bad Gateway</html>",
  });
  assert.deepEqual(parseUpstreamError(503, ""), { message: "HTTP 503" });
  assert.deepEqual(parseUpstreamError(500, '{"error":"boom"}'), { message: "boom" });
});

Deno.test("errorFrame is the Messages error event with the request id", () => {
  const err = { message: "m", code: "c", type: "api_error", param: null, action: "a", request_id: "req_9" };
  assert.equal(
    errorFrame(err),
    `event: error\ndata: ${JSON.stringify({ type: "error", error: err, request_id: "req_9" })}\n\n`,
  );
});
