import assert from "node:assert/strict";
import { closeFrames, type Emit, openFrames, type OpenItem, snapshot, textDelta } from "./stream_items.ts";

function recorder(): { emit: Emit; types: string[] } {
  const types: string[] = [];
  let seq = 0;
  return {
    types,
    emit: (type, fields) => (types.push(type), JSON.stringify({ type, sequence_number: seq++, ...fields })),
  };
}

Deno.test("message item lifecycle frames", () => {
  const r = recorder();
  const o: OpenItem = { kind: "message", id: "msg_1", outputIndex: 2, text: "", annotations: [] };
  openFrames(r.emit, o);
  textDelta(r.emit, o, "ab");
  textDelta(r.emit, o, "c");
  const { item } = closeFrames(r.emit, o, "completed");
  assert.deepEqual(r.types, [
    "response.output_item.added",
    "response.content_part.added",
    "response.output_text.delta",
    "response.output_text.delta",
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
  ]);
  assert.equal((item.content as { text: string }[])[0]!.text, "abc");
});

Deno.test("function call opened with buffered arguments emits one delta; done carries name and full args", () => {
  const r = recorder();
  const o: OpenItem = {
    kind: "call",
    id: "fc_1",
    outputIndex: 0,
    call: { callId: "c", name: "f", args: '{"a":1}' },
  };
  openFrames(r.emit, o);
  const { text, item } = closeFrames(r.emit, o, "completed");
  assert.deepEqual(r.types, [
    "response.output_item.added",
    "response.function_call_arguments.delta",
    "response.function_call_arguments.done",
    "response.output_item.done",
  ]);
  assert.match(text, /"name":"f","arguments":"\{\\"a\\":1\}"/);
  assert.equal(item.arguments, '{"a":1}');
  assert.equal(snapshot({ ...o, call: { ...o.call, args: "" } }, "completed").arguments, "{}");
});

Deno.test("reasoning item lifecycle frames", () => {
  const r = recorder();
  const o: OpenItem = { kind: "reasoning", id: "rs_1", outputIndex: 0, text: "" };
  openFrames(r.emit, o);
  textDelta(r.emit, o, "x");
  const { item } = closeFrames(r.emit, o, "completed");
  assert.deepEqual(r.types, [
    "response.output_item.added",
    "response.reasoning_summary_part.added",
    "response.reasoning_summary_text.delta",
    "response.reasoning_summary_text.done",
    "response.reasoning_summary_part.done",
    "response.output_item.done",
  ]);
  assert.deepEqual(item, { id: "rs_1", type: "reasoning", summary: [{ type: "summary_text", text: "x" }] });
});
