/** Chat Completions `CompletionUsage` ↔ internal usage (§3.7, §5.8). Both count cached tokens in the prompt. */
import { emptyUsage, type IRUsage, mergeUsage } from "../../ir/usage.ts";
import { isObject, type Obj } from "./validate.ts";

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

function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

/** The fields an upstream usage object reports (lenient: missing or non-numeric fields are left out). */
export function fromChatUsage(raw: Obj): Partial<IRUsage> {
  const prompt = isObject(raw.prompt_tokens_details) ? raw.prompt_tokens_details : {};
  const completion = isObject(raw.completion_tokens_details) ? raw.completion_tokens_details : {};
  const out: Partial<IRUsage> = {};
  const set = (k: keyof IRUsage, v: number | undefined) => {
    if (v !== undefined) out[k] = v;
  };
  set("inputTokens", num(raw.prompt_tokens));
  set("outputTokens", num(raw.completion_tokens));
  // DeepSeek reports cache hits as prompt_cache_hit_tokens instead of the details object.
  set("cachedInputTokens", num(prompt.cached_tokens) ?? num(raw.prompt_cache_hit_tokens));
  set("cacheWriteTokens", num(prompt.cache_write_tokens) ?? num(raw.cache_write_tokens));
  set("reasoningTokens", num(completion.reasoning_tokens));
  return out;
}

/** A complete usage record from an upstream usage object (absent fields are 0). */
export function fullChatUsage(raw: Obj): IRUsage {
  return mergeUsage(emptyUsage(), fromChatUsage(raw));
}
