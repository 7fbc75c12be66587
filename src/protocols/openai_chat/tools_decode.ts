/** Chat `tools` and `tool_choice` (client side) → internal. */
import type { IRTool, IRToolChoice } from "../../ir/request.ts";
import { isObject } from "../../util/json.ts";
import { fail } from "./validate.ts";

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * `[{type:"function", function:{name, description?, parameters?, strict?}}]`. A tool in another
 * surface's shape (Anthropic `{name, input_schema}`, Responses flat `{type, name, parameters}`)
 * has no `function` object and is refused as a whole (`tools.N`).
 */
export function decodeTools(raw: unknown): IRTool[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) fail("tools");
  return raw.map((t, i): IRTool => {
    const p = `tools.${i}`;
    if (!isObject(t) || !isObject(t.function)) fail(p);
    if (t.type !== "function") fail(`${p}.type`);
    const fn = t.function;
    if (typeof fn.name !== "string" || !TOOL_NAME.test(fn.name)) fail(`${p}.function.name`);
    const tool: IRTool = { name: fn.name, parameters: { type: "object", properties: {} } };
    if (fn.description !== undefined && fn.description !== null) {
      if (typeof fn.description !== "string") fail(`${p}.function.description`);
      tool.description = fn.description;
    }
    if (fn.parameters !== undefined && fn.parameters !== null) {
      if (!isObject(fn.parameters)) fail(`${p}.function.parameters`);
      tool.parameters = fn.parameters;
    }
    if (fn.strict !== undefined && fn.strict !== null) {
      if (typeof fn.strict !== "boolean") fail(`${p}.function.strict`);
      tool.strict = fn.strict;
    }
    return tool;
  });
}

/** `"auto" | "none" | "required" | {type:"function", function:{name}}`; undefined when absent. */
export function decodeToolChoice(raw: unknown): IRToolChoice | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (raw === "auto" || raw === "none" || raw === "required") return { type: raw };
  if (!isObject(raw) || raw.type !== "function") fail("tool_choice");
  const fn = raw.function;
  if (!isObject(fn) || typeof fn.name !== "string" || !TOOL_NAME.test(fn.name)) {
    fail("tool_choice.function.name");
  }
  return { type: "tool", name: fn.name };
}
