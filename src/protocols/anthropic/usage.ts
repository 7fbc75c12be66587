/**
 * Anthropic usage ↔ internal usage (protocols §5.8); the wire fields are ./wire.ts `Usage`. Anthropic `input_tokens` EXCLUDES cache reads and writes;
 * the internal `inputTokens` includes them.
 */
import { emptyUsage, type IRUsage } from "../../ir/usage.ts";
import { Usage } from "./wire.ts";

/** The Anthropic usage fields we read, each kept only when the upstream reported it. */
export interface AnthropicUsageFields {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
  thinking?: number;
  webSearch?: number;
}

/** Reads the fields present in one upstream `usage` object (null or non-numeric fields count as absent). */
export function readAnthropicUsage(raw: unknown): AnthropicUsageFields {
  const u = Usage.safeParse(raw);
  if (!u.success) return {};
  const out: AnthropicUsageFields = {};
  const set = (k: keyof AnthropicUsageFields, v: number | undefined) => {
    if (v !== undefined) out[k] = v;
  };
  set("input", u.data.input_tokens);
  set("output", u.data.output_tokens);
  set("cacheRead", u.data.cache_read_input_tokens);
  set("cacheWrite", u.data.cache_creation_input_tokens);
  set("thinking", u.data.output_tokens_details?.thinking_tokens);
  set("webSearch", u.data.server_tool_use?.web_search_requests);
  return out;
}

/** Cumulative streaming merge: each field present in `next` replaces the one in `into`. */
export function mergeAnthropicUsage(into: AnthropicUsageFields, next: AnthropicUsageFields): void {
  Object.assign(into, next);
}

/** The internal fields derivable from what is known so far. */
export function toIRUsage(f: AnthropicUsageFields): Partial<IRUsage> {
  const out: Partial<IRUsage> = {};
  if (f.input !== undefined || f.cacheRead !== undefined || f.cacheWrite !== undefined) {
    const read = f.cacheRead ?? 0;
    const write = f.cacheWrite ?? 0;
    out.inputTokens = (f.input ?? 0) + read + write;
    out.cachedInputTokens = read;
    out.cacheWriteTokens = write;
  }
  if (f.output !== undefined) out.outputTokens = f.output;
  if (f.thinking !== undefined) out.reasoningTokens = f.thinking;
  if (f.webSearch !== undefined) out.webSearchRequests = f.webSearch;
  return out;
}

/** A complete internal usage from a non-streaming `usage` object; undefined when it is missing. */
export function usageFromAnthropic(raw: unknown): IRUsage | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  return { ...emptyUsage(), ...toIRUsage(readAnthropicUsage(raw)) };
}

/** Internal usage → the four Anthropic counters shown to clients. */
export function usageToAnthropic(u: IRUsage): {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
} {
  return {
    input_tokens: Math.max(0, u.inputTokens - u.cachedInputTokens - u.cacheWriteTokens),
    output_tokens: u.outputTokens,
    cache_read_input_tokens: u.cachedInputTokens,
    cache_creation_input_tokens: u.cacheWriteTokens,
  };
}
