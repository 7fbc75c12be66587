import assert from "node:assert/strict";
import {
  BlockDeltaFrame,
  InputJsonDelta,
  readBlockDelta,
  SignatureDelta,
  TextDelta,
  ThinkingDelta,
} from "./wire.ts";

const DELTA_SCHEMA = {
  text_delta: TextDelta,
  thinking_delta: ThinkingDelta,
  signature_delta: SignatureDelta,
  input_json_delta: InputJsonDelta,
} as const;

function schemaAccepts(frame: Record<string, unknown>): boolean {
  const f = BlockDeltaFrame.safeParse(frame);
  if (!f.success) return false;
  const schema = DELTA_SCHEMA[f.data.delta.type as keyof typeof DELTA_SCHEMA];
  return schema ? schema.safeParse(f.data.delta).success : true;
}

Deno.test("readBlockDelta accepts exactly what BlockDeltaFrame and the delta schemas accept", () => {
  const frames: Record<string, unknown>[] = [
    { index: 0, delta: { type: "text_delta", text: "a" } },
    { index: 0, delta: { type: "text_delta", text: "" } },
    { index: 1, delta: { type: "input_json_delta", partial_json: "" } },
    { index: 0, delta: { type: "thinking_delta", thinking: "t" } },
    { index: 0, delta: { type: "signature_delta", signature: "s" } },
    { index: 2, delta: { type: "citations_delta", citation: {} } },
    { index: 0, delta: { type: "future_delta", x: 1 } },
    { index: 0, delta: { type: "text_delta" } },
    { index: 0, delta: { type: "text_delta", text: 5 } },
    { index: 0, delta: { type: "input_json_delta", partial_json: null } },
    { index: "0", delta: { type: "text_delta", text: "a" } },
    { delta: { type: "text_delta", text: "a" } },
    { index: 0 },
    { index: 0, delta: [] },
    { index: 0, delta: { text: "a" } },
  ];
  for (const f of frames) {
    let guard = true;
    try {
      readBlockDelta(f);
    } catch {
      guard = false;
    }
    assert.equal(guard, schemaAccepts(f), JSON.stringify(f));
  }
});
