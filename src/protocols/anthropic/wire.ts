/**
 * Wire schemas of what the gateway reads from an Anthropic Messages upstream (protocols §2.6, §2.7):
 * only the fields the decoders use, every object loose (unknown fields pass), absent and `null` the
 * same for optional fields. A content block or delta is checked in two steps — `{type}` first, then
 * the schema of the types the decoder handles — so block and delta types it does not know are never
 * refused (protocols §2.7: "Unknown event types must be ignored").
 */
import { z } from "zod";
import { isObject, type JsonObject } from "../../util/json.ts";
import { malformedFrame } from "../wire_frame.ts";

const optText = z.string().nullish();
/** An object kept as sent (a tool's `input` is re-serialised as is): checked, not copied. */
const rawObject = z.custom<JsonObject>(isObject);
/** A usage counter: another type counts as not reported, as a missing one does (usage.ts tests pin it). */
const count = z.number().optional().catch(undefined);

/** `usage` (protocols §2.6, §5.8); read by usage.ts. */
export const Usage = z.looseObject({
  input_tokens: count,
  output_tokens: count,
  cache_read_input_tokens: count,
  cache_creation_input_tokens: count,
  output_tokens_details: z.looseObject({ thinking_tokens: count }).optional().catch(undefined),
  server_tool_use: z.looseObject({ web_search_requests: count }).optional().catch(undefined),
});
export type Usage = z.output<typeof Usage>;

/** A content block or a delta before its type is known. */
export const Typed = z.looseObject({ type: z.string() });

/** Content blocks the decoders turn into events (in `message_start.message.content`, `content_block_start`, responses). */
export const TextBlock = z.looseObject({
  text: optText,
  /** Read one by one (server_blocks.ts): a citation the gateway cannot read is dropped, never the answer. */
  citations: z.array(z.unknown()).nullish().catch(undefined),
});
export const ThinkingBlock = z.looseObject({ thinking: optText, signature: optText });
export const ToolUseBlock = z.looseObject({ id: z.string(), name: z.string(), input: rawObject.nullish() });

/**
 * Server-tool blocks (protocols §2.6; spec §4.5): `server_tool_use` has the shape of ToolUseBlock; its result
 * (`web_search_tool_result`, `web_fetch_tool_result`) names the call and carries a list of search results, a
 * fetched document, or an error object (`*_tool_result_error` with `error_code`), read by server_blocks.ts.
 */
export const ServerToolResultBlock = z.looseObject({
  tool_use_id: z.string(),
  content: z.unknown(),
});
/** One web search result (`web_search_result`); other entries are skipped. */
export const WebSearchResult = z.looseObject({ url: z.string(), title: optText });
/** A fetched page (`web_fetch_result`): its URL and the document's title. */
export const WebFetchResult = z.looseObject({
  url: z.string(),
  content: z.looseObject({ title: optText }).nullish().catch(undefined),
});
export const ToolResultError = z.looseObject({ error_code: optText });
/** A `web_search_result_location` citation, the one citation type that names a URL. */
export const WebSearchCitation = z.looseObject({ url: z.string(), title: optText, cited_text: optText });
/** `citations_delta.citation`, read when a text block receives one. */
export const CitationsDelta = z.looseObject({ citation: z.unknown() });

/** `content_block_delta.delta` by type. */
export const TextDelta = z.looseObject({ text: z.string() });
export const ThinkingDelta = z.looseObject({ thinking: z.string() });
export const SignatureDelta = z.looseObject({ signature: z.string() });
export const InputJsonDelta = z.looseObject({ partial_json: z.string() });

/**
 * `content_block_delta` is every streamed token, so it is read by a hand-written guard that accepts
 * exactly what BlockDeltaFrame and the delta schema of its type accept (wire_test.ts checks they agree):
 * zod doubled the decoder's cost per frame (10,000 frames: ≈5 → ≈10 ms, +0.5–1.3 µs a frame).
 * Returns the block index, the delta type and, for the four types the decoder reads, its text.
 */
export function readBlockDelta(data: JsonObject): { index: number; type: string; text?: string } {
  const { index, delta } = data;
  if (typeof index !== "number") throw malformedFrame("anthropic", "content_block_delta", "index");
  if (!isObject(delta) || typeof delta.type !== "string") {
    throw malformedFrame("anthropic", "content_block_delta", isObject(delta) ? "delta.type" : "delta");
  }
  const key = DELTA_TEXT[delta.type];
  if (key === undefined) return { index, type: delta.type };
  const text = delta[key];
  if (typeof text !== "string") throw malformedFrame("anthropic", "content_block_delta", `delta.${key}`);
  return { index, type: delta.type, text };
}

/** The text field of each delta type the decoder reads (the schemas above). */
const DELTA_TEXT: Record<string, string> = {
  text_delta: "text",
  thinking_delta: "thinking",
  signature_delta: "signature",
  input_json_delta: "partial_json",
};

/** Stream frames the decoder handles (`ping` and unknown types are not read). */
export const MessageStartFrame = z.looseObject({
  message: z.looseObject({
    id: optText,
    model: optText,
    content: z.array(Typed).nullish(),
    usage: rawObject.nullish(),
  }),
});
export type MessageStartMessage = z.output<typeof MessageStartFrame>["message"];
export const BlockStartFrame = z.looseObject({ index: z.number(), content_block: Typed });
export const BlockDeltaFrame = z.looseObject({ index: z.number(), delta: Typed });
export const BlockStopFrame = z.looseObject({ index: z.number() });
export const MessageDeltaFrame = z.looseObject({
  delta: z.looseObject({ stop_reason: optText, stop_sequence: optText }),
  usage: rawObject.nullish(),
});
/** An `error` frame ends the stream whatever its shape: every field is read leniently. */
export const ErrorFrame = z.looseObject({
  error: z.looseObject({
    type: z.string().optional().catch(undefined),
    message: z.string().optional().catch(undefined),
  }).optional().catch(undefined),
});

/** A non-streaming answer (protocols §2.6): a `message` with a content array. */
export const Message = z.looseObject({
  type: z.literal("message").optional(),
  id: optText,
  model: optText,
  content: z.array(Typed),
  stop_reason: optText,
  stop_sequence: optText,
  usage: rawObject.nullish(),
});
