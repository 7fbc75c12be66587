import assert from "node:assert/strict";
import { finalArguments, functionCallItem, messageItem, reasoningItem } from "./items.ts";

Deno.test("item shapes", () => {
  assert.deepEqual(messageItem("msg_1", "in_progress"), {
    id: "msg_1",
    type: "message",
    status: "in_progress",
    content: [],
    role: "assistant",
  });
  assert.deepEqual(reasoningItem("rs_1"), { id: "rs_1", type: "reasoning", summary: [] });
  assert.deepEqual(functionCallItem("fc_1", "completed", { callId: "call_1", name: "f" }, "{}"), {
    id: "fc_1",
    type: "function_call",
    status: "completed",
    arguments: "{}",
    call_id: "call_1",
    name: "f",
  });
  assert.deepEqual(
    functionCallItem(
      "fc_2",
      "in_progress",
      { callId: "c", name: "spawn_agent", namespace: "multi_agent_v1" },
      "",
    ),
    {
      id: "fc_2",
      type: "function_call",
      status: "in_progress",
      arguments: "",
      call_id: "c",
      name: "spawn_agent",
      namespace: "multi_agent_v1",
    },
  );
  assert.equal(finalArguments(""), "{}");
  assert.equal(finalArguments('{"a":1}'), '{"a":1}');
});
