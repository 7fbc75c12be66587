/** Chat Completions `CompletionUsage` ↔ internal usage (protocols §3.7, §5.8; wire fields in ./wire.ts). Both count cached tokens in the prompt. */
import { emptyUsage, type IRUsage, mergeUsage } from "../../ir/usage.ts";
import type { JsonObject } from "../../util/json.ts";
import { readUsage } from "./wire.ts";

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number; cache_write_tokens?: number };
  completion_tokens_details: { reasoning_tokens: number };
}

export function toChatUsage(u: IRUsage): ChatUsage {
  const details: ChatUsage["prompt_tokens_details"] = { cached_tokens: u.cachedInputTokens };
  if (u.cacheWriteTokens > 0) details.cache_write_tokens = u.cacheWriteTokens;
  return {
    prompt_tokens: u.inputTokens,
    completion_tokens: u.outputTokens,
    total_tokens: u.inputTokens + u.outputTokens,
    prompt_tokens_details: details,
    completion_tokens_details: { reasoning_tokens: u.reasoningTokens },
  };
}

/** The fields an upstream usage object reports (lenient: missing or non-numeric fields are left out). */
export function fromChatUsage(raw: JsonObject): Partial<IRUsage> {
  const u = readUsage(raw);
  const out: Partial<IRUsage> = {};
  const set = (k: keyof IRUsage, v: number | undefined) => {
    if (v !== undefined) out[k] = v;
  };
  set("inputTokens", u.prompt_tokens);
  set("outputTokens", u.completion_tokens);
  // DeepSeek reports cache hits as prompt_cache_hit_tokens instead of the details object.
  set("cachedInputTokens", u.prompt_tokens_details?.cached_tokens ?? u.prompt_cache_hit_tokens);
  set("cacheWriteTokens", u.prompt_tokens_details?.cache_write_tokens ?? u.cache_write_tokens);
  set("reasoningTokens", u.completion_tokens_details?.reasoning_tokens);
  set("webSearchRequests", u.server_tool_use?.web_search_requests);
  return out;
}

/** A complete usage record from an upstream usage object (absent fields are 0). */
export function fullChatUsage(raw: JsonObject): IRUsage {
  return mergeUsage(emptyUsage(), fromChatUsage(raw));
}
