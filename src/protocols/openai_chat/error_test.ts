import assert from "node:assert/strict";
import type { ErrorObject } from "../../errors/error_object.ts";
import { chatErrorFrames } from "./error.ts";

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
