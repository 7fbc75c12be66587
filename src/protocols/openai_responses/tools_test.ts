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

Deno.test("a namespace tool's members become flat tools that remember their client name", () => {
  const out = decodeTools([
    { type: "function", name: "exec_command", parameters: { type: "object" } },
    {
      type: "namespace",
      name: "multi_agent_v1",
      description: "Sub-agents",
      tools: [
        {
          type: "function",
          name: "spawn_agent",
          description: "Spawn",
          strict: false,
          parameters: { type: "object" },
        },
        { type: "function", name: "wait_agent" },
      ],
    },
  ]);
  assert.deepEqual(out.tools, [
    { name: "exec_command", parameters: { type: "object" } },
    {
      name: "multi_agent_v1__spawn_agent",
      description: "Spawn",
      parameters: { type: "object" },
      strict: false,
      member: { namespace: "multi_agent_v1", name: "spawn_agent" },
    },
    {
      name: "multi_agent_v1__wait_agent",
      parameters: { type: "object", properties: {} },
      member: { namespace: "multi_agent_v1", name: "wait_agent" },
    },
  ]);
});

Deno.test("namespace tools: malformed shapes and ambiguous flat names are refused with the path", () => {
  const ns = (extra: Record<string, unknown>) => ({
    type: "namespace",
    name: "n",
    tools: [{ type: "function", name: "f" }],
    ...extra,
  });
  assert.throws(() => decodeTools([ns({ name: "" })]), { code: "invalid_request", param: "tools.0.name" });
  assert.throws(() => decodeTools([ns({ tools: [] })]), { code: "invalid_request", param: "tools.0.tools" });
  assert.throws(() => decodeTools([ns({ description: 5 })]), {
    code: "invalid_request",
    param: "tools.0.description",
  });
  assert.throws(() => decodeTools([ns({ tools: [{ type: "web_search" }] })]), {
    code: "unsupported_parameter",
    param: "tools.0.tools.0",
  });
  assert.throws(() => decodeTools([{ type: "function", name: "n__f" }, ns({})]), {
    code: "invalid_request",
    param: "tools.1",
  });
  assert.throws(() => decodeTools([{ type: "function", name: "f" }, { type: "function", name: "f" }]), {
    code: "invalid_request",
    param: "tools.1",
  });
});
