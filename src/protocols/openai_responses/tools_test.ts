import assert from "node:assert/strict";
import { decodeToolChoice, decodeTools, toolChoiceToWire, toolsToWire } from "./tools.ts";

Deno.test("flat function tools decode; parameters default to an empty object schema", () => {
  assert.deepEqual(decodeTools([{ type: "function", name: "f", description: "d" }]), {
    tools: [{ name: "f", description: "d", parameters: { type: "object", properties: {} } }],
  });
  assert.deepEqual(decodeTools(undefined), { tools: [] });
});

Deno.test("the hosted web_search tool is taken out of the tools with its place and options", () => {
  const out = decodeTools([
    { type: "function", name: "f" },
    { type: "web_search", external_web_access: true, search_context_size: "low" },
  ]);
  assert.equal(out.tools.length, 1);
  assert.deepEqual(out.webSearch, { param: "tools.1", searchContextSize: "low" });
  assert.throws(() => decodeTools([{ type: "web_search" }, { type: "web_search_preview" }]), {
    param: "tools.1",
  });
  assert.throws(() => decodeTools([{ type: "file_search" }]), {
    code: "unsupported_parameter",
    param: "tools.0",
  });
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
