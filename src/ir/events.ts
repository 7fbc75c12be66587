/**
 * Internal stream events: every upstream stream decoder emits these, every surface stream encoder
 * consumes them. One model for all directions keeps the codecs N+M instead of N×M.
 *
 * Ordering contract (decoders guarantee it, encoders rely on it):
 * - `start` comes first, exactly once.
 * - text / reasoning / tool-call / server-tool events follow in the order the upstream produced them;
 *   tool calls are numbered by `index` (0, 1, … counting tool calls only); argument deltas of different
 *   calls may interleave (Chat Completions upstreams do this).
 * - `server_tool` is one provider-run tool call (beta's web search or fetch), emitted once, complete, when
 *   its result has arrived; a call whose result never came is not emitted.
 * - `citations` closes a cited text block: it follows that block's last `text_delta` and comes before
 *   anything else; the block is the last `textLength` UTF-16 code units of the text streamed so far
 *   (an encoder that merges consecutive text blocks computes the cited span from it).
 * - `usage` may appear any number of times; each carries cumulative values, merge field by field,
 *   last value wins.
 * - `finish` comes last on success, exactly once, after all content.
 * - `error` is an in-band upstream failure; nothing follows it.
 */
import type { IRUsage } from "./usage.ts";

/** A source a text span cites (Anthropic `web_search_result_location`; OpenAI `url_citation`). */
export interface IRCitation {
  url: string;
  title?: string;
  /** The quoted source text (Anthropic `cited_text`), when the upstream gives it. */
  citedText?: string;
}

/** What a provider-run tool returned: its sources (search results, the fetched page), or the error code. */
export type IRServerToolResult =
  | { ok: true; sources: { url: string; title?: string }[] }
  | { ok: false; errorCode: string };

/** A tool the provider ran inside the answer (Anthropic `server_tool_use` + its `*_tool_result`). */
export interface IRServerTool {
  /** The provider's call id (`srvtoolu_…`). */
  id: string;
  /** `web_search`, `web_fetch`, or another provider tool name. */
  name: string;
  /** The call's input as the provider reported it (`{query}`, `{url}`). */
  input: Record<string, unknown>;
  result: IRServerToolResult;
}

export type IRStopReason =
  | "stop" // natural end (end_turn / stop / completed)
  | "stop_sequence" // a client stop string matched
  | "length" // output budget hit (max_tokens / length / incomplete:max_output_tokens)
  | "tool_calls" // waiting for client tool results
  | "content_filter"; // refusal / content filter

export type IREvent =
  | { type: "start"; id: string; model: string }
  | { type: "text_delta"; text: string }
  | { type: "reasoning_delta"; text: string }
  /** Provider signature for the reasoning block just streamed (Anthropic `signature_delta`). */
  | { type: "reasoning_signature"; signature: string }
  | { type: "tool_call_start"; index: number; id: string; name: string }
  | { type: "tool_call_delta"; index: number; arguments: string }
  | ({ type: "server_tool" } & IRServerTool)
  /** The text block just streamed (its last `textLength` UTF-16 units) cites these sources. */
  | { type: "citations"; textLength: number; citations: IRCitation[] }
  | { type: "usage"; usage: Partial<IRUsage> }
  | { type: "finish"; reason: IRStopReason; stopSequence?: string }
  | { type: "error"; status?: number; upstreamType?: string; upstreamCode?: string; message: string };
