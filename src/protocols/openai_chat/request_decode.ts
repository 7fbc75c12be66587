/** Chat Completions client body → internal request (strict, protocols §3.2). */
import type { IRRequest } from "../../ir/request.ts";
import { decodeMessages } from "./messages_decode.ts";
import { decodeToolChoice, decodeTools } from "./tools_decode.ts";
import { isObject, type JsonObject } from "../../util/json.ts";
import { fail, optBoolean, optString } from "./validate.ts";

function optPositiveInt(body: JsonObject, key: string): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v) || v <= 0) fail(key, "invalid_parameter");
  return v;
}

function optNumber(body: JsonObject, key: string, min: number, max: number): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isFinite(v)) fail(key);
  if (v < min || v > max) fail(key, "invalid_parameter");
  return v;
}

function decodeStop(raw: unknown): string[] {
  if (raw === undefined || raw === null) return [];
  if (typeof raw === "string") return [raw];
  if (!Array.isArray(raw)) fail("stop");
  raw.forEach((s, i) => {
    if (typeof s !== "string") fail(`stop.${i}`);
  });
  return raw as string[];
}

function decodeIncludeUsage(raw: unknown): boolean {
  if (raw === undefined || raw === null) return false;
  if (!isObject(raw)) fail("stream_options");
  return optBoolean(raw, "include_usage", "stream_options.include_usage") ?? false;
}

export function decodeRequest(body: Record<string, unknown>): IRRequest {
  if (typeof body.model !== "string") fail("model");
  const { system, messages } = decodeMessages(body.messages);
  const req: IRRequest = {
    model: body.model,
    system,
    messages,
    stream: optBoolean(body, "stream", "stream") ?? false,
    includeUsage: decodeIncludeUsage(body.stream_options),
    tools: decodeTools(body.tools),
    stop: decodeStop(body.stop),
  };
  const maxTokens = optPositiveInt(body, "max_tokens");
  const maxCompletion = optPositiveInt(body, "max_completion_tokens");
  const maxOutputTokens = maxCompletion ?? maxTokens;
  if (maxOutputTokens !== undefined) req.maxOutputTokens = maxOutputTokens;
  const toolChoice = decodeToolChoice(body.tool_choice);
  if (toolChoice) req.toolChoice = toolChoice;
  const parallel = optBoolean(body, "parallel_tool_calls", "parallel_tool_calls");
  if (parallel !== undefined) req.parallelToolCalls = parallel;
  const temperature = optNumber(body, "temperature", 0, 2);
  if (temperature !== undefined) req.temperature = temperature;
  const topP = optNumber(body, "top_p", 0, 1);
  if (topP !== undefined) req.topP = topP;
  const effort = optString(body, "reasoning_effort", "reasoning_effort");
  if (effort !== undefined) req.reasoningEffort = effort;
  const user = optString(body, "user", "user");
  const safety = optString(body, "safety_identifier", "safety_identifier");
  if (safety !== undefined || user !== undefined) req.user = safety ?? user;
  const cacheKey = optString(body, "prompt_cache_key", "prompt_cache_key");
  if (cacheKey !== undefined) req.promptCacheKey = cacheKey;
  return req;
}
