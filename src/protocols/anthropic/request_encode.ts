/** Internal request → Anthropic upstream body (protocols §2.2, §5.3, §5.5, §5.6). */
import type { IRRequest, IRToolChoice } from "../../ir/request.ts";
import type { UpstreamRequestOptions } from "../codec.ts";
import { encodeMessages } from "./messages_encode.ts";

/** Effort → thinking budget (protocols §5.6); efforts not listed (and "none") mean no thinking. */
const EFFORT_BUDGET: Record<string, number> = {
  minimal: 1024,
  low: 1024,
  medium: 2048,
  high: 4096,
  xhigh: 4096,
  max: 4096,
};

function thinkingBudget(req: IRRequest): number | undefined {
  if (req.reasoningEffort === "none") return undefined;
  if (req.thinkingBudget !== undefined) return req.thinkingBudget;
  return req.reasoningEffort === undefined ? undefined : EFFORT_BUDGET[req.reasoningEffort];
}

function toolChoice(
  choice: IRToolChoice | undefined,
  parallel: boolean | undefined,
  thinking: boolean,
): Record<string, unknown> | undefined {
  let out: Record<string, unknown>;
  switch (choice?.type) {
    case undefined:
      if (parallel !== false) return undefined;
      out = { type: "auto" };
      break;
    case "none":
      return { type: "none" };
    case "auto":
      out = { type: "auto" };
      break;
    case "required":
      out = { type: thinking ? "auto" : "any" };
      break;
    case "tool":
      out = thinking ? { type: "auto" } : { type: "tool", name: choice.name };
      break;
  }
  if (parallel === false) out.disable_parallel_tool_use = true;
  return out;
}

/**
 * The Responses hosted `web_search` tool as Messages' server tool (protocols §5.3). Its search_context_size and
 * user_location have no Messages equivalent a provider accepts (spec §4.5 refuses user_location) and are
 * dropped; max_uses is the spec's upper bound (spec §4.5, §8.4: 1–5).
 */
export const HOSTED_WEB_SEARCH_MAX_USES = 5;
const WEB_SEARCH_SERVER_TOOL = {
  type: "web_search_20250305",
  name: "web_search",
  max_uses: HOSTED_WEB_SEARCH_MAX_USES,
};

export function encodeRequest(req: IRRequest, opts: UpstreamRequestOptions): Record<string, unknown> {
  let maxTokens = req.maxOutputTokens ?? opts.defaultMaxTokens;
  const budget = thinkingBudget(req);
  // Thinking counts inside max_tokens and must stay below it: raise the cap rather than the budget.
  if (budget !== undefined && maxTokens <= budget) maxTokens = budget + maxTokens;

  const body: Record<string, unknown> = {
    model: opts.upstreamModel,
    max_tokens: maxTokens,
    messages: encodeMessages(req.messages),
    stream: req.stream,
  };
  const system = req.system.filter((s) => s !== "").join("\n\n");
  if (system) body.system = system;
  const tools: Record<string, unknown>[] = req.tools.map((t) => {
    const tool: Record<string, unknown> = { name: t.name };
    if (t.description) tool.description = t.description;
    tool.input_schema = Object.keys(t.parameters).length > 0
      ? t.parameters
      : { type: "object", properties: {} };
    return tool;
  });
  if (req.hostedWebSearch) tools.push(WEB_SEARCH_SERVER_TOOL);
  if (tools.length > 0) {
    body.tools = tools;
    const choice = toolChoice(req.toolChoice, req.parallelToolCalls, budget !== undefined);
    if (choice) body.tool_choice = choice;
  }
  if (budget !== undefined) {
    body.thinking = { type: "enabled", budget_tokens: budget };
    // With thinking on, temperature and top_k are rejected and top_p only accepts 0.95–1 (protocols §6, pitfall 36).
    if (req.topP !== undefined && req.topP >= 0.95) body.top_p = req.topP;
  } else {
    if (req.temperature !== undefined) body.temperature = Math.min(1, req.temperature);
    if (req.topP !== undefined) body.top_p = req.topP;
    if (req.topK !== undefined) body.top_k = req.topK;
  }
  if (req.stop.length > 0) body.stop_sequences = req.stop;
  if (req.user) body.metadata = { user_id: req.user };
  return body;
}
