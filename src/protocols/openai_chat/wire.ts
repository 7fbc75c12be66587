/**
 * Wire schemas of what the gateway reads from a Chat Completions upstream (protocols §3.5–§3.7):
 * only the fields the decoders use, every object loose (unknown fields pass), absent and `null` the
 * same for optional fields. A stream chunk is read in two steps: the chunk (`choices`, `usage`,
 * `error`) and then only the choice the decoder follows (`index` 0), so other choices and their
 * fields are never parsed.
 */
import { z } from "zod";
import { isObject, type JsonObject } from "../../util/json.ts";
import { malformedFrame, optTextField } from "../wire_frame.ts";

const optText = z.string().nullish();
/** An object kept as sent: checked, not copied. */
const rawObject = z.custom<JsonObject>(isObject);
/** A string, or a number as its decimal text; any other value counts as absent. */
const lenientText = z.union([z.string(), z.number().transform(String)]).optional().catch(undefined);
/** A usage counter: another type counts as not reported (usage_test.ts pins it). */
const count = z.number().optional().catch(undefined);

/**
 * `CompletionUsage` (protocols §3.7) with the DeepSeek cache fields (protocols §3.9) and the provider's count
 * of web searches (`server_tool_use.web_search_requests`, theta: spec §8.1); read by `readUsage`, which
 * wire_test.ts holds to it.
 */
export const Usage = z.looseObject({
  prompt_tokens: count,
  completion_tokens: count,
  prompt_cache_hit_tokens: count,
  cache_write_tokens: count,
  prompt_tokens_details: z.looseObject({ cached_tokens: count, cache_write_tokens: count }).optional()
    .catch(undefined),
  completion_tokens_details: z.looseObject({ reasoning_tokens: count }).optional().catch(undefined),
  server_tool_use: z.looseObject({ web_search_requests: count }).optional().catch(undefined),
});

/** `annotations` of a message or delta (url_citation.ts reads them): another type counts as none. */
const annotations = z.array(z.unknown()).optional().catch(undefined);

/** An in-band `{"error": …}` body (protocols §3.8): it ends the stream whatever its shape, so read leniently. */
export const ErrorBody = z.looseObject({
  message: lenientText,
  type: lenientText,
  code: lenientText,
  status: z.number().optional().catch(undefined),
});

/** One stream chunk as the decoder first sees it. */
export const Chunk = z.looseObject({
  choices: z.array(z.looseObject({ index: z.number().nullish() })).nullish(),
  usage: rawObject.nullish(),
});
/** `id` and `model` of the first chunk (some servers send numbers: kept as their text). */
export const ChunkHead = z.looseObject({ id: lenientText, model: lenientText });

export const ToolCallDelta = z.looseObject({
  index: z.number().nullish(),
  id: optText,
  function: z.looseObject({ name: optText, arguments: optText }).nullish(),
});
/** `choices[0]` of a chunk. */
export const ChunkChoice = z.looseObject({
  delta: z.looseObject({
    content: optText,
    reasoning_content: optText,
    reasoning: optText,
    refusal: optText,
    tool_calls: z.array(ToolCallDelta).nullish(),
    annotations,
  }).nullish(),
  finish_reason: optText,
});
export type ChunkChoice = z.output<typeof ChunkChoice>;
export type Completion = z.output<typeof Completion>;
export type ToolCallDelta = z.output<typeof ToolCallDelta>;

/**
 * Every streamed token is one chunk, so chunks are read by a hand-written guard that accepts exactly
 * what Chunk and ChunkChoice accept (wire_test.ts checks they agree): zod doubled the decoder's cost
 * per chunk (10,000 chunks: +11–20 ms, +1.1–2.0 µs a chunk), more than any other frame type.
 * Returns the followed choice (`index` 0 or absent) and `usage`.
 */
export function readChunk(raw: JsonObject): { choice?: ChunkChoice; usage?: JsonObject } {
  const { choices, usage } = raw;
  if (choices !== undefined && choices !== null && !Array.isArray(choices)) throw bad("choices");
  if (usage !== undefined && usage !== null && !isObject(usage)) throw bad("usage");
  let followed: JsonObject | undefined;
  // Loops, not callbacks or spreads: this runs once per streamed token (no closure or temporary per chunk).
  const list: unknown[] = choices ?? [];
  for (let i = 0; i < list.length; i++) {
    const c = list[i];
    if (!isObject(c)) throw bad(`choices.${i}`);
    const index = c.index;
    if (index !== undefined && index !== null && typeof index !== "number") throw bad(`choices.${i}.index`);
    if (followed === undefined && (index ?? 0) === 0) followed = c;
  }
  const out: { choice?: ChunkChoice; usage?: JsonObject } = {};
  if (followed) out.choice = readChoice(followed);
  if (usage) out.usage = usage as JsonObject;
  return out;
}

const bad = (at: string) => malformedFrame("openai_chat", "chunk", at);
const text = (v: unknown, at: string) => optTextField(v, "openai_chat", "chunk", at);

function readChoice(c: JsonObject): ChunkChoice {
  const finish = text(c.finish_reason, "choice.finish_reason");
  const d = c.delta;
  const out: ChunkChoice = {};
  if (finish !== undefined) out.finish_reason = finish;
  if (d === undefined || d === null) return out;
  if (!isObject(d)) throw bad("choice.delta");
  const delta: NonNullable<ChunkChoice["delta"]> = {
    content: text(d.content, "delta.content"),
    reasoning_content: text(d.reasoning_content, "delta.reasoning_content"),
    reasoning: text(d.reasoning, "delta.reasoning"),
    refusal: text(d.refusal, "delta.refusal"),
  };
  if (Array.isArray(d.annotations)) delta.annotations = d.annotations;
  const calls = d.tool_calls;
  if (calls !== undefined && calls !== null) {
    if (!Array.isArray(calls)) throw bad("delta.tool_calls");
    delta.tool_calls = calls.map((tc: unknown, i: number) => readToolCall(tc, `delta.tool_calls.${i}`));
  }
  out.delta = delta;
  return out;
}

function readToolCall(tc: unknown, at: string): ToolCallDelta {
  if (!isObject(tc)) throw bad(at);
  const index = tc.index;
  if (index !== undefined && index !== null && typeof index !== "number") throw bad(`${at}.index`);
  const out: ToolCallDelta = { index: index as number | null | undefined, id: text(tc.id, `${at}.id`) };
  const fn = tc.function;
  if (fn !== undefined && fn !== null) {
    if (!isObject(fn)) throw bad(`${at}.function`);
    out.function = {
      name: text(fn.name, `${at}.function.name`),
      arguments: text(fn.arguments, `${at}.function.arguments`),
    };
  }
  return out;
}

/** A non-streaming `chat.completion` (protocols §3.5); read by `readCompletion`, which wire_test.ts holds to it. */
export const Completion = z.looseObject({
  id: optText,
  model: optText,
  choices: z.array(z.unknown()),
  usage: rawObject.nullish(),
});
/** `choices[0]` of a completion; read by `readCompletionChoice`, which wire_test.ts holds to it. */
export const CompletionChoice = z.looseObject({
  index: z.unknown().optional(),
  finish_reason: optText,
  message: z.looseObject({
    content: z.union([z.string(), z.array(z.unknown())]).nullish(),
    reasoning_content: optText,
    reasoning: optText,
    refusal: optText,
    tool_calls: z.array(z.unknown()).nullish(),
    annotations,
  }),
});
/** A tool call of a completion; `arguments` is kept as sent (a non-string is re-serialised). */
export const CompletionToolCall = z.looseObject({
  id: optText,
  function: z.looseObject({ name: optText, arguments: z.unknown().optional() }),
});

/**
 * Every JSON answer is one completion, so it is read by hand-written guards that accept exactly what
 * Completion and CompletionChoice accept (wire_test.ts checks they agree); zod cost ≈0.3 µs per answer
 * (docs/performance.md, "JSON path: the gateway's own work"). `undefined` when the schema would refuse it.
 */
export function readCompletion(raw: unknown): Completion | undefined {
  if (!isObject(raw)) return undefined;
  const { id, model, choices, usage } = raw;
  if (!isOptText(id) || !isOptText(model) || !Array.isArray(choices)) return undefined;
  if (usage !== undefined && usage !== null && !isObject(usage)) return undefined;
  return raw as Completion;
}

/** The fields of `choices[0]` the decoder reads, as CompletionChoice reads them. */
export interface CompletionChoiceRead {
  finish_reason?: string | null;
  message: {
    content?: string | unknown[] | null;
    reasoning_content?: string | null;
    reasoning?: string | null;
    refusal?: string | null;
    tool_calls?: unknown[] | null;
    annotations?: unknown[];
  };
}

/** See `readCompletion`; `annotations` of another type than an array reads as absent, as the schema's catch. */
export function readCompletionChoice(raw: unknown): CompletionChoiceRead | undefined {
  if (!isObject(raw) || !isOptText(raw.finish_reason)) return undefined;
  const m = raw.message;
  if (!isObject(m)) return undefined;
  const { content, reasoning_content, reasoning, refusal, tool_calls } = m;
  if (content !== undefined && content !== null && typeof content !== "string" && !Array.isArray(content)) {
    return undefined;
  }
  if (!isOptText(reasoning_content) || !isOptText(reasoning) || !isOptText(refusal)) return undefined;
  if (tool_calls !== undefined && tool_calls !== null && !Array.isArray(tool_calls)) return undefined;
  return {
    finish_reason: raw.finish_reason as string | null | undefined,
    message: {
      content,
      reasoning_content,
      reasoning,
      refusal,
      tool_calls,
      annotations: Array.isArray(m.annotations) ? m.annotations : undefined,
    },
  };
}

/**
 * `Usage` read by hand (every answer and every stream's usage chunk has one): what `Usage.parse` gives, a
 * counter of another type than a number, or a details object of another type than an object, as absent.
 */
export function readUsage(raw: JsonObject): UsageRead {
  const count = (v: unknown) => typeof v === "number" ? v : undefined;
  const details = (v: unknown) => isObject(v) ? v : undefined;
  const prompt = details(raw.prompt_tokens_details);
  const completion = details(raw.completion_tokens_details);
  const tools = details(raw.server_tool_use);
  return {
    prompt_tokens: count(raw.prompt_tokens),
    completion_tokens: count(raw.completion_tokens),
    prompt_cache_hit_tokens: count(raw.prompt_cache_hit_tokens),
    cache_write_tokens: count(raw.cache_write_tokens),
    prompt_tokens_details: prompt &&
      { cached_tokens: count(prompt.cached_tokens), cache_write_tokens: count(prompt.cache_write_tokens) },
    completion_tokens_details: completion && { reasoning_tokens: count(completion.reasoning_tokens) },
    server_tool_use: tools && { web_search_requests: count(tools.web_search_requests) },
  };
}

/** The fields of a usage object usage.ts reads. */
export interface UsageRead {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_cache_hit_tokens?: number;
  cache_write_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number };
  server_tool_use?: { web_search_requests?: number };
}

const isOptText = (v: unknown) => v === undefined || v === null || typeof v === "string";
