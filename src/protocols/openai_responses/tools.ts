/** Function tools and tool_choice (protocols §4.4, §5.3): client wire → IR, IR → upstream / echo wire. */
import { fieldError } from "../../errors/gateway_error.ts";
import type { IRRequest, IRTool, IRToolChoice } from "../../ir/request.ts";
import { isObject, str } from "../../util/json.ts";
import { flatToolName } from "./namespace.ts";
import { absent } from "./util.ts";

const EMPTY_SCHEMA = { type: "object", properties: {} };

function decodeTool(t: unknown, p: string): IRTool {
  if (!isObject(t)) throw fieldError("invalid_request", p);
  // Chat-shaped {type:"function", function:{…}} and Anthropic-shaped {name, input_schema} are not Responses tools.
  if ("function" in t || "input_schema" in t) throw fieldError("invalid_request", p);
  if (t.type === undefined) throw fieldError("invalid_request", `${p}.type`);
  if (typeof t.type !== "string") throw fieldError("invalid_request", `${p}.type`);
  if (t.type !== "function") throw fieldError("unsupported_parameter", p);
  if (typeof t.name !== "string" || t.name === "") throw fieldError("invalid_request", `${p}.name`);
  const tool: IRTool = { name: t.name, parameters: EMPTY_SCHEMA };
  if (!absent(t.description)) {
    if (typeof t.description !== "string") throw fieldError("invalid_request", `${p}.description`);
    tool.description = t.description;
  }
  if (!absent(t.parameters)) {
    if (!isObject(t.parameters)) throw fieldError("invalid_request", `${p}.parameters`);
    tool.parameters = t.parameters;
  }
  if (!absent(t.strict)) {
    if (typeof t.strict !== "boolean") throw fieldError("invalid_request", `${p}.strict`);
    tool.strict = t.strict;
  }
  return tool;
}

/** A `namespace` tool's member functions, as flat tools that remember their client name. */
function decodeNamespace(t: Record<string, unknown>, p: string): IRTool[] {
  const namespace = str(t.name);
  if (!namespace) throw fieldError("invalid_request", `${p}.name`);
  if (!absent(t.description) && typeof t.description !== "string") {
    throw fieldError("invalid_request", `${p}.description`);
  }
  if (!Array.isArray(t.tools) || t.tools.length === 0) throw fieldError("invalid_request", `${p}.tools`);
  return t.tools.map((m, j) => {
    const tool = decodeTool(m, `${p}.tools.${j}`);
    return { ...tool, name: flatToolName(namespace, tool.name), member: { namespace, name: tool.name } };
  });
}

/** The hosted web search tool (`web_search`, or its preview name); its other fields are options. */
const WEB_SEARCH = new Set(["web_search", "web_search_preview"]);

/**
 * `tools` → IR function tools (namespace members flattened), plus the hosted web search when offered (what
 * it becomes is the family's call). Other built-in tool types are unsupported. Names are unique after
 * flattening: a flat member name that another tool already has would make a call ambiguous.
 */
export function decodeTools(v: unknown): { tools: IRTool[]; webSearch?: IRRequest["hostedWebSearch"] } {
  if (absent(v)) return { tools: [] };
  if (!Array.isArray(v)) throw fieldError("invalid_request", "tools");
  const tools: IRTool[] = [];
  const names = new Set<string>();
  let webSearch: IRRequest["hostedWebSearch"];
  v.forEach((t, i) => {
    const p = `tools.${i}`;
    if (isObject(t) && typeof t.type === "string" && WEB_SEARCH.has(t.type)) {
      if (webSearch) throw fieldError("invalid_request", p); // one is enough
      webSearch = { param: p };
      const size = str(t.search_context_size);
      if (size) webSearch.searchContextSize = size;
      if (isObject(t.user_location)) webSearch.userLocation = t.user_location;
      return;
    }
    const decoded = isObject(t) && t.type === "namespace" ? decodeNamespace(t, p) : [decodeTool(t, p)];
    for (const tool of decoded) {
      if (names.has(tool.name)) throw fieldError("invalid_request", p);
      names.add(tool.name);
      tools.push(tool);
    }
  });
  return webSearch ? { tools, webSearch } : { tools };
}

/** `tool_choice` → IR. Hosted-tool and allowed_tools choices are unsupported. */
export function decodeToolChoice(v: unknown): IRToolChoice | undefined {
  if (absent(v)) return undefined;
  if (typeof v === "string") {
    if (v === "auto" || v === "none" || v === "required") return { type: v };
    throw fieldError("invalid_parameter", "tool_choice");
  }
  if (!isObject(v)) throw fieldError("invalid_request", "tool_choice");
  if (typeof v.type !== "string") throw fieldError("invalid_request", "tool_choice.type");
  if (v.type !== "function") throw fieldError("unsupported_parameter", "tool_choice");
  const name = str(v.name);
  if (!name) throw fieldError("invalid_request", "tool_choice.name");
  return { type: "tool", name };
}

/** IR tools → flat Responses function tools; `strict` is false unless the source said true (protocols §6 pitfall 24). */
export function toolsToWire(tools: IRTool[]): Record<string, unknown>[] {
  return tools.map((t) => {
    const out: Record<string, unknown> = { type: "function", name: t.name };
    if (t.description !== undefined) out.description = t.description;
    out.parameters = t.parameters ?? EMPTY_SCHEMA;
    out.strict = t.strict === true;
    return out;
  });
}

export function toolChoiceToWire(c: IRToolChoice | undefined): string | Record<string, unknown> | undefined {
  if (!c) return undefined;
  return c.type === "tool" ? { type: "function", name: c.name } : c.type;
}
