/**
 * `[[sim:NAME]]` / `[[sim:NAME=VALUE]]` directives embedded in the last user turn.
 *
 * One `indexOf` scan for the marker; unknown names and malformed values are ignored.
 */

import { parseWriteTask, type WriteTask } from "./write_task.ts";

export type Fault =
  | { kind: "status"; status: number }
  | { kind: "error_mid" }
  | { kind: "cut_mid" }
  | { kind: "stall" }
  | { kind: "wrong_model" }
  | { kind: "no_usage" }
  | { kind: "zero_usage" }
  | { kind: "non_json" }
  | { kind: "truncated_frame" };

/** Faults that act inside an already started (200) body. */
export type MidFault = "error_mid" | "cut_mid" | "stall" | "truncated_frame";

export interface Directives {
  /** Answer length in output tokens (words). */
  words?: number;
  /** Call a tool when tools are offered. */
  tool: boolean;
  /** Reasoning length in tokens; 0 = no reasoning. */
  reasoning: number;
  cached: number;
  search: number;
  delay: number;
  interval: number;
  faults: Fault[];
  /** Write a file with the request's file-writing tool (write_task.ts). */
  write?: WriteTask;
  /** End with a structured refusal (Anthropic `stop_reason: "refusal"`) after the answer words. */
  refusal: boolean;
  /** Chat: the answer cites a web page with a `url_citation` annotation (the search's other form). */
  urlCitation: boolean;
  /** Report this many prompt tokens whatever the request's length. */
  promptTokens?: number;
  /** Anthropic web fetches (server tool `web_fetch_*`). */
  fetch: number;
  /** Every search result is a `web_search_tool_result_error` with this code; `billed`: still counted. */
  searchError?: { code: string; billed: boolean };
  /** Every fetch result is a `web_fetch_tool_result_error` with this code. */
  fetchError?: string;
  /** Searches find nothing (`content: []`). */
  searchEmpty: boolean;
  /** Split the cited answer into an uncited and a cited text block. */
  citeSplit: boolean;
  /** Emit the search / fetch blocks even when the request offers no such server tool. */
  forceServerTools: boolean;
  /**
   * The provider's own output limit for the whole run (gamma/eta's loop limit): the answer is cut at this
   * many output tokens whatever the request's budget, reported like a budget cut.
   */
  loopLimit?: number;
}

/** Anthropic web search error codes (protocols §2.2). */
export const SEARCH_ERROR_CODES: ReadonlySet<string> = new Set([
  "invalid_tool_input",
  "unavailable",
  "max_uses_exceeded",
  "too_many_requests",
  "query_too_long",
  "request_too_large",
]);

/** Anthropic web fetch error codes (protocols §2.2). */
export const FETCH_ERROR_CODES: ReadonlySet<string> = new Set([
  "invalid_tool_input",
  "url_too_long",
  "url_not_allowed",
  "url_not_in_prior_context",
  "url_not_accessible",
  "unsupported_content_type",
  "too_many_requests",
  "max_uses_exceeded",
  "unavailable",
]);

export const MAX_WORDS = 100_000;
export const DEFAULT_REASONING = 8;
const MAX_MS = 600_000;
const MARK = "[[sim:";

export function emptyDirectives(): Directives {
  return {
    tool: false,
    reasoning: 0,
    cached: 0,
    search: 0,
    delay: 0,
    interval: 0,
    faults: [],
    refusal: false,
    urlCitation: false,
    fetch: 0,
    searchEmpty: false,
    citeSplit: false,
    forceServerTools: false,
  };
}

function intValue(v: string | undefined, max: number): number | undefined {
  if (v === undefined || v === "") return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) return undefined;
  return Math.min(Math.floor(n), max);
}

const SIMPLE_FAULTS = new Set([
  "error_mid",
  "cut_mid",
  "stall",
  "wrong_model",
  "no_usage",
  "zero_usage",
  "non_json",
  "truncated_frame",
]);

function parseFault(v: string | undefined): Fault | undefined {
  if (!v) return undefined;
  if (v.startsWith("status:")) {
    const status = Number(v.slice(7));
    if (Number.isInteger(status) && status >= 400 && status <= 599) return { kind: "status", status };
    return undefined;
  }
  return SIMPLE_FAULTS.has(v) ? { kind: v } as Fault : undefined;
}

function apply(d: Directives, name: string, value: string | undefined): void {
  switch (name) {
    case "words": {
      const n = intValue(value, MAX_WORDS);
      if (n !== undefined) d.words = n;
      break;
    }
    case "tool":
      d.tool = true;
      break;
    case "refusal":
      d.refusal = true;
      break;
    case "reasoning":
      d.reasoning = value === undefined ? DEFAULT_REASONING : intValue(value, MAX_WORDS) ?? DEFAULT_REASONING;
      break;
    case "cached":
      d.cached = intValue(value, Number.MAX_SAFE_INTEGER) ?? d.cached;
      break;
    case "search":
      d.search = intValue(value, 1_000_000) ?? d.search;
      break;
    case "fetch":
      d.fetch = intValue(value, 1_000_000) ?? d.fetch;
      break;
    case "url_citation":
      d.urlCitation = true;
      break;
    case "prompt_tokens": {
      const n = intValue(value, Number.MAX_SAFE_INTEGER);
      if (n !== undefined) d.promptTokens = n;
      break;
    }
    case "search_error": {
      const [code, flag] = (value ?? "").split(":");
      if (code && SEARCH_ERROR_CODES.has(code) && (flag === undefined || flag === "billed")) {
        d.searchError = { code, billed: flag === "billed" };
      }
      break;
    }
    case "fetch_error":
      if (value && FETCH_ERROR_CODES.has(value)) d.fetchError = value;
      break;
    case "search_empty":
      d.searchEmpty = true;
      break;
    case "cite_split":
      d.citeSplit = true;
      break;
    case "force_server_tools":
      d.forceServerTools = true;
      break;
    case "loop_limit": {
      const n = intValue(value, MAX_WORDS);
      if (n !== undefined) d.loopLimit = n;
      break;
    }
    case "delay":
      d.delay = intValue(value, MAX_MS) ?? d.delay;
      break;
    case "interval":
      d.interval = intValue(value, MAX_MS) ?? d.interval;
      break;
    case "write": {
      const w = parseWriteTask(value);
      if (w) d.write = w;
      break;
    }
    case "fault": {
      const f = parseFault(value);
      if (f) d.faults.push(f);
      break;
    }
  }
}

export interface Scan {
  directives: Directives;
  /** The text with every `[[sim:…]]` removed. */
  clean: string;
}

/** Extract directives from `text` and return the text without them. */
export function scanDirectives(text: string): Scan {
  const d = emptyDirectives();
  let at = text.indexOf(MARK);
  if (at < 0) return { directives: d, clean: text };
  let clean = "";
  let from = 0;
  while (at >= 0) {
    const end = text.indexOf("]]", at + MARK.length);
    if (end < 0) break;
    const body = text.slice(at + MARK.length, end).trim();
    const eq = body.indexOf("=");
    if (eq < 0) apply(d, body, undefined);
    else apply(d, body.slice(0, eq).trim(), body.slice(eq + 1).trim());
    clean += text.slice(from, at);
    from = end + 2;
    at = text.indexOf(MARK, from);
  }
  clean += text.slice(from);
  return { directives: d, clean };
}

export function hasFault(d: Directives, kind: Fault["kind"]): boolean {
  for (const f of d.faults) if (f.kind === kind) return true;
  return false;
}

export function statusFault(d: Directives): number | undefined {
  for (const f of d.faults) if (f.kind === "status") return f.status;
  return undefined;
}

export function midFault(d: Directives): MidFault | undefined {
  for (const f of d.faults) {
    if (
      f.kind === "error_mid" || f.kind === "cut_mid" || f.kind === "stall" || f.kind === "truncated_frame"
    ) {
      return f.kind;
    }
  }
  return undefined;
}
