import assert from "node:assert/strict";
import { parseUpstreamError } from "./upstream_error.ts";

Deno.test("parseUpstreamError reads the OpenAI and Anthropic error shapes", () => {
  assert.deepEqual(
    parseUpstreamError(
      429,
      '{"error":{"message":"Rate limit","type":"requests","param":null,"code":"rate_limit_exceeded"}}',
    ),
    { message: "Rate limit", type: "requests", code: "rate_limit_exceeded" },
  );
  assert.deepEqual(
    parseUpstreamError(
      529,
      '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"r"}',
    ),
    { message: "Overloaded", type: "overloaded_error" },
  );
  assert.deepEqual(
    parseUpstreamError(500, '{"error":{"message":"boom","type":"server_error","code":null}}'),
    {
      message: "boom",
      type: "server_error",
    },
  );
  assert.deepEqual(parseUpstreamError(429, '{"error":{"code":429}}'), {
    message: '{"code":429}',
    code: "429",
  });
});

Deno.test("parseUpstreamError accepts string errors, detail, message and plain text", () => {
  assert.deepEqual(parseUpstreamError(400, '{"error":"bad thing"}'), { message: "bad thing" });
  assert.deepEqual(parseUpstreamError(422, '{"detail":"Field required"}'), { message: "Field required" });
  assert.deepEqual(parseUpstreamError(422, '{"detail":[{"loc":["a"]}]}'), { message: '[{"loc":["a"]}]' });
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
