/** Chat Completions `url_citation` annotations (protocols §3.5, §5.2), shared by the JSON and stream encoders. */
import type { IRCitation } from "../../ir/events.ts";

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
