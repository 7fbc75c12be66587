import assert from "node:assert/strict";
import { ArgumentsDoneFrame, DeltaFrame, readDelta, ReasoningDeltaFrame, TextDoneFrame } from "./wire.ts";

Deno.test("readDelta accepts exactly what the delta frame schemas accept", () => {
  const cases: [string, typeof DeltaFrame | typeof TextDoneFrame | typeof ArgumentsDoneFrame, string][] = [
    ["delta", DeltaFrame, "response.output_text.delta"],
    ["text", TextDoneFrame, "response.output_text.done"],
    ["arguments", ArgumentsDoneFrame, "response.function_call_arguments.done"],
    ["delta", ReasoningDeltaFrame, "response.reasoning_summary_text.delta"],
  ];
  const located = { item_id: "msg_1", output_index: 0, content_index: 0 };
  for (const [key, schema, type] of cases) {
    const frames: Record<string, unknown>[] = [
      { ...located, [key]: "x" },
      { [key]: "" },
      { item_id: null, output_index: null, [key]: "x", summary_index: 1 },
      { ...located },
      { ...located, [key]: 1 },
      { ...located, [key]: null },
      { ...located, item_id: 1, [key]: "x" },
      { ...located, output_index: "0", [key]: "x" },
      { ...located, content_index: {}, [key]: "x" },
    ];
    if (schema === ReasoningDeltaFrame) frames.push({ [key]: "x", summary_index: "1" });
    for (const f of frames) {
      let guard = true;
      try {
        readDelta(f, type, key);
      } catch {
        guard = false;
      }
      assert.equal(guard, schema.safeParse(f).success, `${type} ${JSON.stringify(f)}`);
    }
  }
});
