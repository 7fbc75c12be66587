/**
 * Normalised token usage. `inputTokens` is the whole prompt INCLUDING cached tokens
 * (OpenAI convention); Anthropic decoders add cache reads/writes back in.
 */
export interface IRUsage {
  inputTokens: number;
  /** Subset of inputTokens served from the provider cache (billed at the cache-read rate). */
  cachedInputTokens: number;
  /** Subset of inputTokens written to the provider cache. */
  cacheWriteTokens: number;
  /** All generated tokens, reasoning included. */
  outputTokens: number;
  /** Subset of outputTokens spent on reasoning. */
  reasoningTokens: number;
  /** Provider-billed web searches (beta server tool, theta search surcharge). */
  webSearchRequests: number;
}

export function emptyUsage(): IRUsage {
  return {
    inputTokens: 0,
    cachedInputTokens: 0,
    cacheWriteTokens: 0,
    outputTokens: 0,
    reasoningTokens: 0,
    webSearchRequests: 0,
  };
}

/** Merge a cumulative partial usage report into `into` (last value wins per field). */
export function mergeUsage(into: IRUsage, part: Partial<IRUsage>): IRUsage {
  for (const k of Object.keys(part) as (keyof IRUsage)[]) {
    const v = part[k];
    if (typeof v === "number" && Number.isFinite(v)) into[k] = v;
  }
  return into;
}
