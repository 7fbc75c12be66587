/**
 * Beta's provider-run tools and citations in an upstream Messages answer (protocols §2.6, §2.7; spec §4.5
 * rules 7, 8, 10), shared by the JSON and the stream decoders: a `server_tool_use` block and its
 * `web_search_tool_result` / `web_fetch_tool_result` become one IRServerTool; `web_search_result_location`
 * citations become IRCitations.
 *
 * - A result lists its sources: the search results (an empty list is a search that found nothing, not an
 *   error), or the fetched page with its document title.
 * - A result whose `content.type` ends in `_tool_result_error` is a failed call with its `error_code`
 *   (`unknown` when the upstream gave none).
 * - Only web search and web fetch results are read; other server tools (code execution, …) are not beta's
 *   (spec §4.5) and stay skipped.
 * - Citations of other types (`char_location`, `page_location`, … — a fetched document's) name no URL and
 *   are dropped, as is a citation the gateway cannot read: a citation is an annotation, never the answer.
 */
import type { IRCitation, IRServerTool, IRServerToolResult } from "../../ir/events.ts";
import { isObject, type JsonObject } from "../../util/json.ts";
import { readWire } from "../wire_frame.ts";
import {
  ServerToolResultBlock,
  ToolResultError,
  WebFetchResult,
  WebSearchCitation,
  WebSearchResult,
} from "./wire.ts";

/** Result block type → the name its call carries. */
const RESULT_TOOLS: Record<string, string> = {
  web_search_tool_result: "web_search",
  web_fetch_tool_result: "web_fetch",
};

/** Whether a block is a server-tool result this module reads. */
export function isServerToolResult(type: string): boolean {
  return Object.hasOwn(RESULT_TOOLS, type);
}

/** A `server_tool_use` seen, waiting for its result. */
export interface PendingCall {
  name: string;
  input: Record<string, unknown>;
}

function result(type: string, content: unknown): IRServerToolResult {
  if (Array.isArray(content)) {
    const sources: { url: string; title?: string }[] = [];
    for (const entry of content) {
      const r = WebSearchResult.safeParse(entry);
      if (r.success) {
        sources.push(r.data.title ? { url: r.data.url, title: r.data.title } : { url: r.data.url });
      }
    }
    return { ok: true, sources };
  }
  // A result form the gateway does not know yet: the call still happened.
  if (!isObject(content) || typeof content.type !== "string") return { ok: true, sources: [] };
  const c = content as JsonObject & { type: string };
  if (c.type.endsWith("_tool_result_error")) {
    const code = readWire("anthropic", `${type} error`, ToolResultError, c).error_code;
    return { ok: false, errorCode: code || "unknown" };
  }
  if (c.type === "web_fetch_result") {
    const page = readWire("anthropic", `${type} content`, WebFetchResult, c);
    const title = page.content?.title;
    return { ok: true, sources: [title ? { url: page.url, title } : { url: page.url }] };
  }
  return { ok: true, sources: [] };
}

/**
 * A result block (its type passed isServerToolResult) with the call it answers, taken out of `calls`. A
 * result whose call was never seen is named after its block type, with no input.
 */
export function serverTool(
  block: JsonObject & { type: string },
  calls: Map<string, PendingCall>,
): IRServerTool {
  const b = readWire("anthropic", `${block.type} block`, ServerToolResultBlock, block);
  const call = calls.get(b.tool_use_id);
  calls.delete(b.tool_use_id);
  return {
    id: b.tool_use_id,
    name: call?.name ?? RESULT_TOOLS[block.type]!,
    input: call?.input ?? {},
    result: result(block.type, b.content),
  };
}

/** One raw citation → an IRCitation, or undefined when it names no URL (or cannot be read). */
export function citation(raw: unknown): IRCitation | undefined {
  if (!isObject(raw) || raw.type !== "web_search_result_location") return undefined;
  const r = WebSearchCitation.safeParse(raw);
  if (!r.success) return undefined;
  const out: IRCitation = { url: r.data.url };
  if (r.data.title) out.title = r.data.title;
  if (r.data.cited_text) out.citedText = r.data.cited_text;
  return out;
}

/** A text block's `citations` list → the IRCitations it holds. */
export function citations(list: readonly unknown[] | null | undefined): IRCitation[] {
  const out: IRCitation[] = [];
  for (const raw of list ?? []) {
    const c = citation(raw);
    if (c) out.push(c);
  }
  return out;
}

/** A server tool's input from its streamed JSON (`{}` when none came, or when it is not an object). */
export function parseInput(json: string, fallback: Record<string, unknown>): Record<string, unknown> {
  if (json === "") return fallback;
  try {
    const v: unknown = JSON.parse(json);
    return isObject(v) ? v : fallback;
  } catch {
    return fallback;
  }
}
