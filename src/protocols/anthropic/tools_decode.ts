/** Client `tools`, `tool_choice` and `thinking` → internal fields, strictly validated (protocols §2.4, §2.5). */
import type { IRTool, IRToolChoice } from "../../ir/request.ts";
import { isObject, type JsonObject } from "../../util/json.ts";
import { array, bad, object, optBoolean, optInteger, optString, string } from "./validate.ts";

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;
/** Versioned server tools (web_search_20250305, …): checked by family rules, not part of the IR. */
const SERVER_TOOL_TYPE = /^[a-z_]+_\d{8}$/;
const EFFORTS = new Set(["low", "medium", "high", "xhigh", "max"]);

export function decodeTools(value: unknown): IRTool[] {
  if (value === undefined) return [];
  const seen = new Set<string>();
  const out: IRTool[] = [];
  array(value, "tools").forEach((raw, i) => {
    const p = `tools.${i}`;
    const t = object(raw, p);
    if (typeof t.type === "string" && SERVER_TOOL_TYPE.test(t.type)) return;
    if (t.type !== undefined && t.type !== "custom") bad(p);
    const name = string(t.name, `${p}.name`);
    if (!TOOL_NAME.test(name) || seen.has(name)) bad(`${p}.name`);
    seen.add(name);
    const schema = object(t.input_schema, `${p}.input_schema`);
    if (schema.type !== "object") bad(`${p}.input_schema.type`);
    const tool: IRTool = { name, parameters: schema };
    const description = optString(t.description, `${p}.description`);
    if (description !== undefined) tool.description = description;
    const strict = optBoolean(t.strict, `${p}.strict`);
    if (strict !== undefined) tool.strict = strict;
    out.push(tool);
  });
  return out;
}

export interface DecodedToolChoice {
  toolChoice?: IRToolChoice;
  parallelToolCalls?: boolean;
}

export function decodeToolChoice(value: unknown): DecodedToolChoice {
  if (value === undefined) return {};
  const c = object(value, "tool_choice");
  let toolChoice: IRToolChoice;
  switch (c.type) {
    case "auto":
      toolChoice = { type: "auto" };
      break;
    case "any":
      toolChoice = { type: "required" };
      break;
    case "none":
      toolChoice = { type: "none" };
      break;
    case "tool":
      toolChoice = { type: "tool", name: string(c.name, "tool_choice.name") };
      if (!TOOL_NAME.test(toolChoice.name)) bad("tool_choice.name");
      break;
    default:
      return bad("tool_choice.type");
  }
  const disable = optBoolean(c.disable_parallel_tool_use, "tool_choice.disable_parallel_tool_use");
  return disable === true ? { toolChoice, parallelToolCalls: false } : { toolChoice };
}

export interface DecodedThinking {
  reasoningEffort?: string;
  thinkingBudget?: number;
}

/** Budget → effort (protocols §5.6): ≤ 1024 low, ≤ 4096 medium, else high. */
export function effortForBudget(budget: number): string {
  return budget <= 1024 ? "low" : budget <= 4096 ? "medium" : "high";
}

function effortOf(outputConfig: unknown): string | undefined {
  if (outputConfig === undefined) return undefined;
  const oc: JsonObject = object(outputConfig, "output_config");
  const effort = optString(oc.effort, "output_config.effort");
  if (effort !== undefined && !EFFORTS.has(effort)) bad("output_config.effort");
  return effort;
}

/** `thinking` (+ `output_config.effort` for adaptive thinking). */
export function decodeThinking(thinking: unknown, outputConfig: unknown): DecodedThinking {
  const effort = effortOf(outputConfig);
  if (thinking === undefined) return {};
  if (!isObject(thinking)) bad("thinking");
  switch (thinking.type) {
    case "enabled": {
      const budget = optInteger(thinking.budget_tokens, "thinking.budget_tokens", 1024);
      if (budget === undefined) bad("thinking.budget_tokens");
      return { thinkingBudget: budget, reasoningEffort: effortForBudget(budget) };
    }
    case "adaptive":
      return effort === undefined ? {} : { reasoningEffort: effort };
    case "disabled":
      return { reasoningEffort: "none" };
    default:
      return bad("thinking.type");
  }
}
