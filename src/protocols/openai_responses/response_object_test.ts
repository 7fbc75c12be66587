import assert from "node:assert/strict";
import { responseObject } from "./response_object.ts";
import { testCtx } from "./testing/helpers.ts";

Deno.test("response object echoes request defaults and carries the client model", () => {
  const r = responseObject(testCtx({ parallelToolCalls: false, topP: 0.5 }, "my-model"), {
    id: "resp_x",
    createdAt: 5,
    status: "failed",
    output: [],
    usage: null,
    error: { code: "c", message: "m" },
  });
  assert.equal(r.model, "my-model");
  assert.equal(r.status, "failed");
  assert.deepEqual(r.error, { code: "c", message: "m" });
  assert.equal(r.parallel_tool_calls, false);
  assert.equal(r.top_p, 0.5);
  assert.equal(r.temperature, 1);
  assert.equal(r.tool_choice, "auto");
  assert.deepEqual(r.tools, []);
  assert.equal(r.incomplete_details, null);
  assert.equal(r.completed_at, null);
  assert.equal(r.store, false);
});
