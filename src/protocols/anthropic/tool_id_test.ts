import assert from "node:assert/strict";
import { isValidToolId, sanitizeToolId } from "./tool_id.ts";

Deno.test("sanitizeToolId keeps valid ids and rewrites others deterministically and distinctly", () => {
  assert.equal(sanitizeToolId("toolu_01A-b"), "toolu_01A-b");
  const a = sanitizeToolId("Bash:12");
  assert.match(a, /^Bash_12_[0-9a-f]{8}$/);
  assert.equal(sanitizeToolId("Bash:12"), a);
  assert.notEqual(sanitizeToolId("Bash.12"), a);
  assert.ok(isValidToolId(sanitizeToolId("call_x|fc_y")));
  assert.ok(isValidToolId(sanitizeToolId("")));
  assert.ok(isValidToolId(sanitizeToolId("完全")));
});
