import assert from "node:assert/strict";
import { errorFromEvent, errorFromFailed } from "./error.ts";

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
