import assert from "node:assert/strict";
import { statusFromStopReason, stopReasonFromStatus } from "./status.ts";

Deno.test("stop reason → status (protocols §5.7)", () => {
  for (const r of ["stop", "stop_sequence", "tool_calls"] as const) {
    assert.deepEqual(statusFromStopReason(r), { status: "completed", incompleteReason: null });
  }
  assert.deepEqual(statusFromStopReason("length"), {
    status: "incomplete",
    incompleteReason: "max_output_tokens",
  });
  assert.deepEqual(statusFromStopReason("content_filter"), {
    status: "incomplete",
    incompleteReason: "content_filter",
  });
});

Deno.test("status → stop reason (protocols §5.7)", () => {
  assert.equal(stopReasonFromStatus("completed", null, false), "stop");
  assert.equal(stopReasonFromStatus("completed", null, true), "tool_calls");
  assert.equal(stopReasonFromStatus("completed", null, false, true), "content_filter");
  assert.equal(stopReasonFromStatus("incomplete", { reason: "max_output_tokens" }, true), "length");
  assert.equal(stopReasonFromStatus("incomplete", { reason: "content_filter" }, false), "content_filter");
  assert.equal(stopReasonFromStatus("incomplete", null, false), "length");
});
