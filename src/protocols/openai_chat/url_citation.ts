/**
 * Chat Completions `url_citation` annotations (protocols §3.5, §5.2): written by the JSON and stream encoders,
 * and read from an upstream answer as the sign that the model searched the web (docs/billing.md).
 */
import type { IRCitation } from "../../ir/events.ts";
import { isObject } from "../../util/json.ts";

/**
 * How a Chat upstream reports a web search (theta's surcharge, spec §8.1): `usage.server_tool_use.
 * web_search_requests` counts them, and an answer citing a page (a `url_citation` annotation on the message or
 * on a stream delta) searched at least once, whatever the count says. The usage then reports at least 1.
 */
export function citesUrl(annotations: readonly unknown[] | undefined): boolean {
  return annotations?.some((a) => isObject(a) && a.type === "url_citation") ?? false;
}

/** The searches to report: the upstream's count, at least 1 when the answer cited a page. */
export function searchesOf(reported: number, cited: boolean): number {
  return cited ? Math.max(reported, 1) : reported;
}

/**
 * One annotation per citation, each over the span [start, end) of `message.content` (UTF-16 indexes): an
 * Anthropic citation names its source for a whole text block, not a sub-span. A source without a title gets
 * `""` (the field is required).
 */
export function chatAnnotations(
  citations: readonly IRCitation[],
  start: number,
  end: number,
): Record<string, unknown>[] {
  return citations.map((c) => ({
    type: "url_citation",
    url_citation: { start_index: start, end_index: end, url: c.url, title: c.title ?? "" },
  }));
}
