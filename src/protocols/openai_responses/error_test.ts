import assert from "node:assert/strict";
import { errorFromEvent, errorFromFailed, parseUpstreamError } from "./error.ts";

Deno.test("parseUpstreamError: OpenAI body, string error, detail, message, plain text, empty", () => {
  assert.deepEqual(
    parseUpstreamError(
      429,
      '{"error":{"message":"Rate limit","type":"requests","param":null,"code":"rate_limit_exceeded"}}',
    ),
    { message: "Rate limit", type: "requests", code: "rate_limit_exceeded" },
  );
  assert.deepEqual(parseUpstreamError(400, '{"error":"bad thing"}'), { message: "bad thing" });
  assert.deepEqual(parseUpstreamError(422, '{"detail":"Field required"}'), { message: "Field required" });
  assert.deepEqual(parseUpstreamError(500, '{"message":"oops","code":500}'), {
    message: "oops",
    code: "500",
  });
  assert.deepEqual(parseUpstreamError(502, "<html>Bad Gateway</html>\n"), {
    message: "<html>Bad Gateway</html>",
  });
  assert.deepEqual(parseUpstreamError(503, ""), { message: "HTTP 503" });
  assert.deepEqual(parseUpstreamError(500, "[1,2]"), { message: "[1,2]" });
  assert.equal(parseUpstreamError(500, "x".repeat(2000)).message.length, 500);
});

Deno.test("stream error frames: flat, nested, failed", () => {
  assert.deepEqual(errorFromEvent({ type: "error", code: "server_error", message: "m", param: null }), {
    type: "error",
    message: "m",
    upstreamCode: "server_error",
  });
  assert.deepEqual(
    errorFromEvent({
      type: "error",
      error: { type: "insufficient_quota", code: "insufficient_quota", message: "q" },
    }),
    { type: "error", message: "q", upstreamType: "insufficient_quota", upstreamCode: "insufficient_quota" },
  );
  assert.deepEqual(errorFromFailed({ type: "response.failed", response: {} }), {
    type: "error",
    message: "upstream response failed",
  });
});
