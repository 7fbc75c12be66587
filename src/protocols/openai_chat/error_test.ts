import assert from "node:assert/strict";
import type { ErrorObject } from "../../errors/error_object.ts";
import { chatErrorFrames, parseUpstreamError } from "./error.ts";

Deno.test("parseUpstreamError reads the OpenAI error shape", () => {
  const body = JSON.stringify({
    error: {
      message: "Unsupported parameter",
      type: "invalid_request_error",
      param: "max_tokens",
      code: "unsupported_parameter",
    },
  });
  assert.deepEqual(parseUpstreamError(400, body), {
    message: "Unsupported parameter",
    type: "invalid_request_error",
    code: "unsupported_parameter",
  });
  assert.deepEqual(
    parseUpstreamError(500, '{"error":{"message":"boom","type":"server_error","code":null}}'),
    {
      message: "boom",
      type: "server_error",
    },
  );
});

Deno.test("parseUpstreamError accepts detail, string errors and plain text", () => {
  assert.deepEqual(parseUpstreamError(422, '{"detail":"bad field"}'), { message: "bad field" });
  assert.deepEqual(parseUpstreamError(422, '{"detail":[{"loc":["x"]}]}'), { message: '[{"loc":["x"]}]' });
  assert.deepEqual(parseUpstreamError(400, '{"error":"nope"}'), { message: "nope" });
  assert.deepEqual(parseUpstreamError(502, "  Bad Gateway\n"), { message: "Bad Gateway" });
  assert.deepEqual(parseUpstreamError(503, ""), { message: "HTTP 503" });
  assert.deepEqual(parseUpstreamError(429, '{"error":{"code":429}}'), {
    message: '{"code":429}',
    code: "429",
  });
});

Deno.test("chatErrorFrames writes the error then [DONE]", () => {
  const err: ErrorObject = {
    message: "m",
    code: "c",
    type: "api_error",
    param: null,
    action: "a",
    request_id: "r1",
  };
  assert.equal(
    chatErrorFrames(err),
    'data: {"error":{"message":"m","code":"c","type":"api_error","param":null,"action":"a","request_id":"r1"},"request_id":"r1"}\n\ndata: [DONE]\n\n',
  );
});
