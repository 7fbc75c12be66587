/**
 * Wire schemas of what the gateway reads from a Responses upstream (protocols §4.5–§4.7): only the
 * fields the decoders use, every object loose (unknown fields pass), absent and `null` the same for
 * optional fields. Only the event types the stream decoder handles have a schema; hosted-tool and
 * future events are never parsed past their JSON. `output[]` items are read leniently by
 * response_decode.ts `outputBlocks` (unknown and hosted-tool items carry nothing the IR can express).
 * `error` / `response.failed` frames end the stream whatever their shape (error.ts reads them leniently).
 */
import { z } from "zod";
import { isObject, type JsonObject } from "../../util/json.ts";
import { malformedFrame, optTextField } from "../wire_frame.ts";

const optText = z.string().nullish();
const optIndex = z.number().nullish();
/** An object kept as sent (usage, read leniently by usage.ts): checked, not copied. */
const rawObject = z.custom<JsonObject>(isObject);

/** The response object as far as the decoders read it (lifecycle and terminal events, non-streaming bodies). */
export const ResponseObject = z.looseObject({
  object: z.literal("response").optional(),
  id: optText,
  model: optText,
  status: z.unknown().optional(),
  output: z.array(z.unknown()).nullish(),
  incomplete_details: z.unknown().optional(),
  usage: rawObject.nullish(),
  error: z.unknown().optional(),
});

export type ResponseObject = z.output<typeof ResponseObject>;

/** `response.created` / `in_progress` / `queued` / `completed` / `incomplete`. */
export const ResponseFrame = z.looseObject({ response: ResponseObject });

/** `response.output_item.added` / `.done`; the item is read further only when it is a function call. */
export const OutputItemFrame = z.looseObject({
  output_index: optIndex,
  item: z.looseObject({ type: z.string() }),
});
export type OutputItemFrame = z.output<typeof OutputItemFrame>;
export const FunctionCallItem = z.looseObject({
  id: optText,
  call_id: optText,
  name: optText,
  arguments: optText,
});

/** Where a delta belongs. */
const located = { item_id: optText, output_index: optIndex, content_index: optIndex };
/** `response.function_call_arguments.delta`, `response.output_text.delta`, `response.refusal.delta`. */
export const DeltaFrame = z.looseObject({ ...located, delta: z.string() });
export const ArgumentsDoneFrame = z.looseObject({ ...located, arguments: z.string() });
export const TextDoneFrame = z.looseObject({ ...located, text: z.string() });
/** `response.reasoning_summary_text.delta` (with `summary_index`) and `response.reasoning_text.delta`. */
export const ReasoningDeltaFrame = z.looseObject({ ...located, summary_index: optIndex, delta: z.string() });

export type Located = {
  item_id?: string | null;
  output_index?: number | null;
  content_index?: number | null;
};

/**
 * Delta events (`*.delta`, `*.done` with their text) are every streamed token, so they are read by a
 * hand-written guard that accepts exactly what DeltaFrame / ArgumentsDoneFrame / TextDoneFrame /
 * ReasoningDeltaFrame accept (wire_test.ts checks they agree): zod added ≈0.5–0.8 µs a frame, about
 * doubling the decoder's cost. `key` names the text field (`delta`, `arguments` or `text`).
 */
export function readDelta(
  data: JsonObject,
  type: string,
  key: string,
): Located & { summary_index?: number | null; text: string } {
  const at = (field: string) => malformedFrame("openai_responses", type, field);
  const index = (field: string) => {
    const v = data[field];
    if (v === undefined || v === null || typeof v === "number") return v;
    throw at(field);
  };
  const text = data[key];
  if (typeof text !== "string") throw at(key);
  return {
    item_id: optTextField(data.item_id, "openai_responses", type, "item_id"),
    output_index: index("output_index"),
    content_index: index("content_index"),
    summary_index: type === "response.reasoning_summary_text.delta" ? index("summary_index") : undefined,
    text,
  };
}
