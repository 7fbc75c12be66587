import assert from "node:assert/strict";
import { errorFrame } from "./error.ts";

Deno.test("errorFrame is the Messages error event with the request id", () => {
  const err = { message: "m", code: "c", type: "api_error", param: null, action: "a", request_id: "req_9" };
  assert.equal(
    errorFrame(err),
    `event: error\ndata: ${JSON.stringify({ type: "error", error: err, request_id: "req_9" })}\n\n`,
  );
});
