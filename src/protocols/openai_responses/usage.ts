/** Responses `ResponseUsage` (protocols §4.6) ↔ IR usage. Both count cached tokens inside input_tokens. */
import { emptyUsage, type IRUsage } from "../../ir/usage.ts";
import { isObject, num } from "../../util/json.ts";

/** Wire usage → partial IR usage (only the fields present). Undefined when there is no usage object. */
export function usageFromWire(u: unknown): Partial<IRUsage> | undefined {
  if (!isObject(u)) return undefined;
  const out: Partial<IRUsage> = {};
  const input = num(u.input_tokens) ?? num(u.prompt_tokens);
  const output = num(u.output_tokens) ?? num(u.completion_tokens);
  if (input !== undefined) out.inputTokens = input;
  if (output !== undefined) out.outputTokens = output;
  const inDetails = isObject(u.input_tokens_details) ? u.input_tokens_details : undefined;
  const cached = num(inDetails?.cached_tokens);
  const written = num(inDetails?.cache_write_tokens);
  if (cached !== undefined) out.cachedInputTokens = cached;
  if (written !== undefined) out.cacheWriteTokens = written;
  const outDetails = isObject(u.output_tokens_details) ? u.output_tokens_details : undefined;
  const reasoning = num(outDetails?.reasoning_tokens);
  if (reasoning !== undefined) out.reasoningTokens = reasoning;
  return out;
}

/** IR usage → wire usage; always all five fields with both detail objects (strict clients need them). */
export function usageToWire(u: IRUsage | undefined): Record<string, unknown> {
  const x = u ?? emptyUsage();
  return {
    input_tokens: x.inputTokens,
    input_tokens_details: { cached_tokens: x.cachedInputTokens },
    output_tokens: x.outputTokens,
    output_tokens_details: { reasoning_tokens: x.reasoningTokens },
    total_tokens: x.inputTokens + x.outputTokens,
  };
}
