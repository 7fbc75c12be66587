/** Client Responses body (protocols §4.2) → IRRequest. Unknown top-level fields are tolerated. */
import { fieldError } from "../../errors/gateway_error.ts";
import type { IRRequest } from "../../ir/request.ts";
import { decodeInput } from "./input_decode.ts";
import { decodeToolChoice, decodeTools } from "./tools.ts";
import { isObject } from "../../util/json.ts";
import { absent } from "./util.ts";

function optBool(body: Record<string, unknown>, key: string): boolean | undefined {
  const v = body[key];
  if (absent(v)) return undefined;
  if (typeof v !== "boolean") throw fieldError("invalid_request", key);
  return v;
}

function optString(body: Record<string, unknown>, key: string): string | undefined {
  const v = body[key];
  if (absent(v)) return undefined;
  if (typeof v !== "string") throw fieldError("invalid_request", key);
  return v;
}

function optNumber(body: Record<string, unknown>, key: string, min: number, max: number): number | undefined {
  const v = body[key];
  if (absent(v)) return undefined;
  if (typeof v !== "number" || !Number.isFinite(v)) throw fieldError("invalid_request", key);
  if (v < min || v > max) throw fieldError("invalid_parameter", key);
  return v;
}

function maxOutputTokens(v: unknown): number | undefined {
  if (absent(v)) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v) || v <= 0) {
    throw fieldError("invalid_parameter", "max_output_tokens");
  }
  return v;
}

function reasoningEffort(v: unknown): string | undefined {
  if (absent(v)) return undefined;
  if (!isObject(v)) throw fieldError("invalid_request", "reasoning");
  if (absent(v.effort)) return undefined;
  if (typeof v.effort !== "string") throw fieldError("invalid_request", "reasoning.effort");
  // Providers add levels (alpha documents max/default; spec §4.2 forwards any non-empty level as sent).
  if (v.effort.trim() === "") throw fieldError("invalid_parameter", "reasoning.effort");
  return v.effort;
}

export function decodeRequest(body: Record<string, unknown>): IRRequest {
  if (typeof body.model !== "string") throw fieldError("invalid_request", "model");
  // The gateway keeps no response storage (protocols §5.11): server-side conversation state cannot be honoured.
  for (const key of ["previous_response_id", "conversation"]) {
    if (!absent(body[key])) throw fieldError("unsupported_parameter", key);
  }
  if (absent(body.input)) throw fieldError("invalid_request", "input");

  const instructions = optString(body, "instructions");
  const input = decodeInput(body.input);
  const system = instructions ? [instructions, ...input.system] : input.system;

  const req: IRRequest = {
    model: body.model,
    system,
    messages: input.messages,
    stream: optBool(body, "stream") ?? false,
    includeUsage: false,
    tools: [],
    stop: [],
  };
  const { tools, webSearch } = decodeTools(body.tools);
  req.tools = tools;
  if (webSearch) req.hostedWebSearch = webSearch;
  const toolChoice = decodeToolChoice(body.tool_choice);
  if (toolChoice) req.toolChoice = toolChoice;
  const parallel = optBool(body, "parallel_tool_calls");
  if (parallel !== undefined) req.parallelToolCalls = parallel;
  const max = maxOutputTokens(body.max_output_tokens);
  if (max !== undefined) req.maxOutputTokens = max;
  const temperature = optNumber(body, "temperature", 0, 2);
  if (temperature !== undefined) req.temperature = temperature;
  const topP = optNumber(body, "top_p", 0, 1);
  if (topP !== undefined) req.topP = topP;
  const effort = reasoningEffort(body.reasoning);
  if (effort !== undefined) req.reasoningEffort = effort;
  const safetyId = optString(body, "safety_identifier");
  const legacyUser = optString(body, "user");
  const user = safetyId ?? legacyUser;
  if (user !== undefined) req.user = user;
  const cacheKey = optString(body, "prompt_cache_key");
  if (cacheKey !== undefined) req.promptCacheKey = cacheKey;
  return req;
}
