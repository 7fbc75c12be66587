import assert from "node:assert/strict";
import { decodeMessages } from "./messages_decode.ts";

Deno.test("decodeMessages groups consecutive tool messages and keeps separate groups apart", () => {
  const out = decodeMessages([
    { role: "user", content: "q" },
    {
      role: "assistant",
      content: "",
      tool_calls: [{ id: "a", type: "function", function: { name: "f", arguments: "" } }],
    },
    { role: "tool", tool_call_id: "a", content: "1" },
    { role: "assistant", content: [{ type: "text", text: "again" }], tool_calls: [] },
    { role: "tool", tool_call_id: "b", content: "2" },
    { role: "developer", content: "mid" },
    { role: "tool", tool_call_id: "c", content: "3" },
  ]);
  assert.deepEqual(out.system, ["mid"]);
  assert.deepEqual(out.messages, [
    { role: "user", parts: [{ type: "text", text: "q" }] },
    { role: "assistant", parts: [{ type: "tool_call", id: "a", name: "f", arguments: "" }] },
    { role: "user", parts: [{ type: "tool_result", callId: "a", content: "1" }] },
    { role: "assistant", parts: [{ type: "text", text: "again" }] },
    { role: "user", parts: [{ type: "tool_result", callId: "b", content: "2" }] },
    { role: "user", parts: [{ type: "tool_result", callId: "c", content: "3" }] },
  ]);
});

Deno.test("decodeMessages keeps an assistant message with empty string content", () => {
  const out = decodeMessages([{ role: "assistant", content: "" }]);
  assert.deepEqual(out.messages, [{ role: "assistant", parts: [] }]);
});
