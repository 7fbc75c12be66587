import assert from "node:assert/strict";
import { decodeToolChoice, decodeTools, toolChoiceToWire, toolsToWire } from "./tools.ts";

Deno.test("flat function tools decode; parameters default to an empty object schema", () => {
  assert.deepEqual(decodeTools([{ type: "function", name: "f", description: "d" }]), [
    { name: "f", description: "d", parameters: { type: "object", properties: {} } },
  ]);
  assert.deepEqual(decodeTools(undefined), []);
});

Deno.test("tool_choice values", () => {
  assert.deepEqual(decodeToolChoice("auto"), { type: "auto" });
  assert.deepEqual(decodeToolChoice("none"), { type: "none" });
  assert.deepEqual(decodeToolChoice("required"), { type: "required" });
  assert.deepEqual(decodeToolChoice({ type: "function", name: "f" }), { type: "tool", name: "f" });
  assert.equal(decodeToolChoice(null), undefined);
  assert.throws(() => decodeToolChoice({ type: "function" }), {
    code: "invalid_request",
    param: "tool_choice.name",
  });
});

Deno.test("wire tools: strict false unless true; tool_choice shapes", () => {
  assert.deepEqual(
    toolsToWire([{ name: "a", parameters: { type: "object" } }, { name: "b", parameters: {}, strict: true }]),
    [
      { type: "function", name: "a", parameters: { type: "object" }, strict: false },
      { type: "function", name: "b", parameters: {}, strict: true },
    ],
  );
  assert.equal(toolChoiceToWire({ type: "required" }), "required");
  assert.deepEqual(toolChoiceToWire({ type: "tool", name: "x" }), { type: "function", name: "x" });
  assert.equal(toolChoiceToWire(undefined), undefined);
});
