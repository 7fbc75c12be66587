/** Output item shapes (protocols §4.5) shared by the JSON and the stream encoders. */
import type { IRCitation, IRServerTool } from "../../ir/events.ts";

export type ItemStatus = "in_progress" | "completed" | "incomplete";

export function outputTextPart(text: string, annotations: unknown[] = []): Record<string, unknown> {
  return { type: "output_text", annotations: [...annotations], logprobs: [], text };
}

/** `text === undefined` gives the empty item of `output_item.added`. */
export function messageItem(
  id: string,
  status: ItemStatus,
  text?: string,
  annotations: unknown[] = [],
): Record<string, unknown> {
  return {
    id,
    type: "message",
    status,
    content: text === undefined ? [] : [outputTextPart(text, annotations)],
    role: "assistant",
  };
}

/**
 * `url_citation` annotations (protocols §5.2) for the span [start, end) of an output_text (UTF-16 indexes): one
 * per citation, all over the whole cited span — an Anthropic citation names its source, not a sub-span. A
 * source without a title gets `""` (the field is required).
 */
export function urlCitations(
  citations: readonly IRCitation[],
  start: number,
  end: number,
): Record<string, unknown>[] {
  return citations.map((c) => ({
    type: "url_citation",
    start_index: start,
    end_index: end,
    url: c.url,
    title: c.title ?? "",
  }));
}

/** The provider-run tools a Responses client sees, as `web_search_call` items; others are not shown. */
export function isShownServerTool(tool: IRServerTool): boolean {
  return tool.name === "web_search" || tool.name === "web_fetch";
}

/**
 * A `web_search_call` item (protocols §4.5) for a provider-run web search or fetch. A search is the action
 * `search` with its query (`query` and `queries`) and, once done and successful, the `sources` it found (an
 * empty list for a search with no matches); a fetch is `open_page` with its URL. `final` false gives the
 * in-progress form of `output_item.added` (no sources yet); a failed tool (an error result inside the
 * provider's 200, spec §4.5 rule 8) ends with `status: "failed"`.
 */
export function webSearchCallItem(id: string, tool: IRServerTool, final: boolean): Record<string, unknown> {
  let action: Record<string, unknown>;
  if (tool.name === "web_fetch") {
    const url = typeof tool.input.url === "string"
      ? tool.input.url
      : tool.result.ok && tool.result.sources[0]
      ? tool.result.sources[0].url
      : null;
    action = { type: "open_page", url };
  } else {
    const query = typeof tool.input.query === "string" ? tool.input.query : "";
    action = { type: "search", query, queries: query ? [query] : [] };
    if (final && tool.result.ok) {
      action.sources = tool.result.sources.map((s) => ({ type: "url", url: s.url }));
    }
  }
  const status = !final ? "in_progress" : tool.result.ok ? "completed" : "failed";
  return { id, type: "web_search_call", status, action };
}

export function reasoningItem(id: string, text?: string): Record<string, unknown> {
  return { id, type: "reasoning", summary: text === undefined ? [] : [{ type: "summary_text", text }] };
}

/** A call as the client names it: a namespace member with its `namespace` (namespace.ts). */
export interface ClientCall {
  callId: string;
  name: string;
  namespace?: string;
}

export function functionCallItem(
  id: string,
  status: ItemStatus,
  call: ClientCall,
  args: string,
): Record<string, unknown> {
  const item: Record<string, unknown> = {
    id,
    type: "function_call",
    status,
    arguments: args,
    call_id: call.callId,
    name: call.name,
  };
  if (call.namespace !== undefined) item.namespace = call.namespace;
  return item;
}

/** A finished call never carries empty arguments (protocols §6 pitfall 7). */
export function finalArguments(args: string): string {
  return args === "" ? "{}" : args;
}
