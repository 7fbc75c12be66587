/** Frames of one output item's lifecycle in a Responses stream (protocols §4.7), for the stream encoder. */
import type { IRCitation, IRServerTool } from "../../ir/events.ts";
import {
  type ClientCall,
  finalArguments,
  functionCallItem,
  type ItemStatus,
  messageItem,
  outputTextPart,
  reasoningItem,
  urlCitations,
  webSearchCallItem,
} from "./items.ts";
import type { JsonObject } from "../../util/json.ts";

export type Fields = JsonObject;

/** Serialises one event, assigning the next sequence_number. */
export type Emit = (type: string, fields: Fields) => string;

export interface Call extends ClientCall {
  args: string;
}

/** The one output item currently open. */
export type OpenItem =
  | { kind: "message"; id: string; outputIndex: number; text: string; annotations: Fields[] }
  | { kind: "reasoning"; id: string; outputIndex: number; text: string }
  | { kind: "call"; id: string; outputIndex: number; call: Call };

/** output_item.added and the part/arguments opener of the item. */
export function openFrames(emit: Emit, o: OpenItem): string {
  const at = { item_id: o.id, output_index: o.outputIndex };
  if (o.kind === "message") {
    return emit("response.output_item.added", {
      output_index: o.outputIndex,
      item: messageItem(o.id, "in_progress"),
    }) +
      emit("response.content_part.added", { ...at, content_index: 0, part: outputTextPart("") });
  }
  if (o.kind === "reasoning") {
    return emit("response.output_item.added", { output_index: o.outputIndex, item: reasoningItem(o.id) }) +
      emit("response.reasoning_summary_part.added", {
        ...at,
        summary_index: 0,
        part: { type: "summary_text", text: "" },
      });
  }
  const item = functionCallItem(o.id, "in_progress", o.call, "");
  const added = emit("response.output_item.added", { output_index: o.outputIndex, item });
  // Arguments buffered before the item could open go out as one delta.
  return o.call.args === "" ? added : added + argumentsDelta(emit, o, o.call.args);
}

export function argumentsDelta(emit: Emit, o: OpenItem, delta: string): string {
  return emit("response.function_call_arguments.delta", {
    item_id: o.id,
    output_index: o.outputIndex,
    delta,
  });
}

/** Appends text to an open message / reasoning item and returns its delta frame. */
export function textDelta(emit: Emit, o: OpenItem, delta: string): string {
  if (o.kind === "call") return "";
  o.text += delta;
  const at = { item_id: o.id, output_index: o.outputIndex };
  return o.kind === "message"
    ? emit("response.output_text.delta", { ...at, content_index: 0, delta, logprobs: [] })
    : emit("response.reasoning_summary_text.delta", { ...at, summary_index: 0, delta });
}

/**
 * `url_citation` annotations for the span [start, end) of an open message's text, each announced by
 * `response.output_text.annotation.added` with its index in the part's list.
 */
export function annotationFrames(
  emit: Emit,
  o: OpenItem,
  start: number,
  end: number,
  citations: IRCitation[],
): string {
  if (o.kind !== "message") return "";
  let out = "";
  for (const annotation of urlCitations(citations, start, end)) {
    out += emit("response.output_text.annotation.added", {
      item_id: o.id,
      output_index: o.outputIndex,
      content_index: 0,
      annotation_index: o.annotations.length,
      annotation,
    });
    o.annotations.push(annotation);
  }
  return out;
}

/**
 * A provider-run web search or fetch as one complete `web_search_call` item: `output_item.added`,
 * `web_search_call.in_progress`, `.searching`, `.completed` (not for a failed tool: the API has no failed
 * event), `output_item.done` with the final item. Returns the frames and the final item.
 */
export function serverToolFrames(
  emit: Emit,
  id: string,
  outputIndex: number,
  tool: IRServerTool,
): { text: string; item: Fields } {
  const at = { item_id: id, output_index: outputIndex };
  const item = webSearchCallItem(id, tool, true);
  let text = emit("response.output_item.added", {
    output_index: outputIndex,
    item: webSearchCallItem(id, tool, false),
  }) +
    emit("response.web_search_call.in_progress", at) +
    emit("response.web_search_call.searching", at);
  if (tool.result.ok) text += emit("response.web_search_call.completed", at);
  text += emit("response.output_item.done", { output_index: outputIndex, item });
  return { text, item };
}

/** The item as it stands (for response.failed while it is still open). */
export function snapshot(o: OpenItem, status: ItemStatus): Fields {
  if (o.kind === "message") return messageItem(o.id, status, o.text, o.annotations);
  if (o.kind === "reasoning") return reasoningItem(o.id, o.text);
  const args = status === "completed" ? finalArguments(o.call.args) : o.call.args;
  return functionCallItem(o.id, status, o.call, args);
}

/** The closing frames of an item, ending with output_item.done; `item` is its final form. */
export function closeFrames(
  emit: Emit,
  o: OpenItem,
  status: "completed" | "incomplete",
): { text: string; item: Fields } {
  const at = { item_id: o.id, output_index: o.outputIndex };
  let text: string;
  let item: Fields;
  if (o.kind === "message") {
    text = emit("response.output_text.done", { ...at, content_index: 0, text: o.text, logprobs: [] }) +
      emit("response.content_part.done", {
        ...at,
        content_index: 0,
        part: outputTextPart(o.text, o.annotations),
      });
    item = messageItem(o.id, status, o.text, o.annotations);
  } else if (o.kind === "reasoning") {
    const part = { type: "summary_text", text: o.text };
    text = emit("response.reasoning_summary_text.done", { ...at, summary_index: 0, text: o.text }) +
      emit("response.reasoning_summary_part.done", { ...at, summary_index: 0, part });
    item = reasoningItem(o.id, o.text);
  } else {
    const args = finalArguments(o.call.args);
    text = emit("response.function_call_arguments.done", { ...at, name: o.call.name, arguments: args });
    item = functionCallItem(o.id, status, o.call, args);
  }
  text += emit("response.output_item.done", { output_index: o.outputIndex, item });
  return { text, item };
}
