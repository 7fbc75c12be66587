/**
 * Protocol-neutral answer planning: deterministic Russian words, token accounting,
 * budget truncation and the tool-call decision.
 */

import { type Directives, hasFault, type MidFault, midFault } from "./directives.ts";
import { Words } from "./words.ts";
import { pickWriteTool, writeArgs } from "./write_task.ts";

/** The last user turn (trailing user / tool-result messages) as plain text. */
export interface Turn {
  text: string;
  toolResult: boolean;
}

/** What a request offers in the way of tools. */
export interface ToolOffer {
  /** Client (function) tool names in request order. */
  names: string[];
  /** "none": never call; "auto": only with [[sim:tool]]; "any": call the first; "named": call `name`. */
  choice: "none" | "auto" | "any" | "named";
  name?: string;
  /** Anthropic web_search server tool offered. */
  webSearch: boolean;
  /** Anthropic web_fetch server tool offered. */
  webFetch?: boolean;
}

/** What each protocol module extracts from its request body. */
export interface Inspect {
  model: string;
  stream: boolean;
  /** Output budget (max_tokens / max_completion_tokens / max_output_tokens). */
  budget?: number;
  promptTokens: number;
  turn: Turn;
  tools: ToolOffer;
}

export interface ToolCall {
  name: string;
  /** JSON text of the arguments: {"query": "..."} (or the `write` directive's, write_task.ts). */
  args: string;
  /** `args` split into 3 fragments; one output token each. */
  fragments: string[];
}

export type UsageMode = "normal" | "none" | "zero";

export interface Plan {
  model: string;
  promptTokens: number;
  cached: number;
  searches: number;
  /** Chat: the answer carries a `url_citation` annotation over its text. */
  urlCitation: boolean;
  /** Anthropic web_search server tool offered (or forced by `force_server_tools`). */
  webSearch: boolean;
  /** Anthropic web fetches asked for, and whether a web_fetch server tool is offered (or forced). */
  fetches: number;
  webFetch: boolean;
  /** The page every fetch opens: the first http(s) URL of the last user turn, else FETCH_URL. */
  fetchUrl: string;
  /** Searches as the usage reports them: 0 when they failed with an unbilled error. */
  billedSearches: number;
  /** Every search / fetch result is an error with this code. */
  searchError?: string;
  fetchError?: string;
  /** Searches find nothing. */
  searchEmpty: boolean;
  /** The cited answer is split into an uncited and a cited text block. */
  citeSplit: boolean;
  query: string;
  reasoning: Words;
  reasoningTokens: number;
  text: Words;
  textTokens: number;
  tool: ToolCall | null;
  outputTokens: number;
  truncated: boolean;
  usage: UsageMode;
  interval: number;
  mid?: MidFault;
  /** End with a structured refusal instead of a natural stop (no tool call is made). */
  refusal: boolean;
}

export const DEFAULT_WORDS = 12;
export const TOOL_TOKENS = 3;
export const WRONG_MODEL = "sim-wrong-model";
const SNIPPET_CHARS = 40;
/** The page a web fetch opens when the last user turn names none. */
export const FETCH_URL = "https://example.com/sim/page";

/** The first http(s) URL in `text` (trailing punctuation dropped), or FETCH_URL. */
export function fetchUrlOf(text: string): string {
  const m = /https?:\/\/[^\s<>"'«»()\[\]{}]+/.exec(text);
  const url = m ? m[0].replace(/[.,;:!?]+$/, "") : "";
  return url || FETCH_URL;
}

/** Image blocks are billed by picture size, not payload, as real providers do (≤ ~1,600 tokens once resized). */
export const IMAGE_BLOCK_TOKENS = 1_200;
const IMAGE_TYPES = new Set(["image", "image_url", "input_image"]);

/** Sum of the lengths of every string value (object keys excluded) inside `v`; an image block counts as
 *  IMAGE_BLOCK_TOKENS worth of characters whatever its payload. */
export function countChars(v: unknown): number {
  if (typeof v === "string") return v.length;
  if (v === null || typeof v !== "object") return 0;
  let n = 0;
  if (Array.isArray(v)) {
    for (const x of v) n += countChars(x);
  } else {
    const o = v as Record<string, unknown>;
    if (typeof o.type === "string" && IMAGE_TYPES.has(o.type)) return IMAGE_BLOCK_TOKENS * 4;
    for (const k in o) n += countChars(o[k]);
  }
  return n;
}

/** prompt tokens = max(1, ceil(characters / 4)). */
export function promptTokensOf(...parts: unknown[]): number {
  let n = 0;
  for (const p of parts) n += countChars(p);
  return Math.max(1, Math.ceil(n / 4));
}

function snippetOf(clean: string): string {
  return clean.slice(0, 400).replace(/\s+/g, " ").trim().slice(0, SNIPPET_CHARS).trim();
}

function splitArgs(args: string): string[] {
  const head = 10; // `{"query":"`
  const mid = head + Math.ceil((args.length - head) / 2);
  return [args.slice(0, head), args.slice(head, mid), args.slice(mid)];
}

/** `args` in 3 fragments of about equal length, never splitting a surrogate pair. */
function splitEven(args: string): string[] {
  const cut = (at: number) => {
    const c = args.charCodeAt(at - 1);
    return at > 0 && at < args.length && c >= 0xd800 && c <= 0xdbff ? at + 1 : at;
  };
  const a = cut(Math.ceil(args.length / 3));
  const b = Math.max(a, cut(Math.ceil((args.length * 2) / 3)));
  return [args.slice(0, a), args.slice(a, b), args.slice(b)];
}

function pickTool(tools: ToolOffer, want: boolean): string | undefined {
  switch (tools.choice) {
    case "none":
      return undefined;
    case "named":
      return tools.name;
    case "any":
      return tools.names[0];
    case "auto":
      return want ? tools.names[0] : undefined;
  }
}

export function buildPlan(ins: Inspect, d: Directives, clean: string): Plan {
  const snippet = snippetOf(clean);
  const seedText = snippet || ins.turn.text.slice(0, 64);
  let budget = ins.budget === undefined ? Infinity : Math.max(0, Math.floor(ins.budget));
  // The provider's own limit cuts like a budget, below the request's (or when it gave none).
  if (d.loopLimit !== undefined) budget = Math.min(budget, d.loopLimit);
  const wantReasoning = d.reasoning;
  const reasoningTokens = Math.min(wantReasoning, budget);
  budget -= reasoningTokens;
  let truncated = reasoningTokens < wantReasoning;

  // Never on a tool-result turn, so an agent cannot be sent round the same write forever.
  const writeTool = d.write && !ins.turn.toolResult && ins.tools.choice !== "none"
    ? pickWriteTool(ins.tools.names, ins.tools.choice === "named" ? ins.tools.name : undefined)
    : undefined;
  const toolName = writeTool ?? pickTool(ins.tools, d.tool);
  let tool: ToolCall | null = null;
  let wantWords = d.words ?? DEFAULT_WORDS;
  const query = snippet || "симулятор";
  if (toolName !== undefined && !truncated && !d.refusal) {
    if (budget >= TOOL_TOKENS) {
      if (writeTool) {
        const args = writeArgs(writeTool, d.write!);
        tool = { name: writeTool, args, fragments: splitEven(args) };
      } else {
        const args = JSON.stringify({ query });
        tool = { name: toolName, args, fragments: splitArgs(args) };
      }
      wantWords = 0;
    } else {
      truncated = true;
    }
  }
  let textTokens = 0;
  if (!tool) {
    textTokens = Math.min(wantWords, budget);
    if (textTokens < wantWords) truncated = true;
  }
  const toolTokens = tool ? TOOL_TOKENS : 0;

  const usage: UsageMode = hasFault(d, "no_usage") ? "none" : hasFault(d, "zero_usage") ? "zero" : "normal";
  const promptTokens = d.promptTokens ?? ins.promptTokens;
  return {
    model: hasFault(d, "wrong_model") ? WRONG_MODEL : ins.model,
    promptTokens,
    cached: Math.min(d.cached, promptTokens),
    searches: d.search,
    urlCitation: d.urlCitation,
    webSearch: ins.tools.webSearch || d.forceServerTools,
    fetches: d.fetch,
    webFetch: (ins.tools.webFetch ?? false) || d.forceServerTools,
    fetchUrl: fetchUrlOf(clean),
    billedSearches: d.searchError && !d.searchError.billed ? 0 : d.search,
    searchError: d.searchError?.code,
    fetchError: d.fetchError,
    searchEmpty: d.searchEmpty,
    citeSplit: d.citeSplit,
    query,
    reasoning: Words.reasoning(seedText, snippet),
    reasoningTokens,
    text: ins.turn.toolResult ? Words.toolResult(seedText, snippet) : Words.answer(seedText, snippet),
    textTokens,
    tool,
    outputTokens: reasoningTokens + textTokens + toolTokens,
    truncated,
    usage,
    interval: d.interval,
    mid: midFault(d),
    refusal: d.refusal && !truncated,
  };
}

/** Number of words carried by each stream delta. */
export function deltaSize(total: number): number {
  return total <= 64 ? 1 : 4;
}

/** The stream deltas of the first `n` words. */
export function* pieces(words: Words, n: number): Generator<string> {
  const g = deltaSize(n);
  for (let i = 0; i < n; i += g) yield words.slice(i, Math.min(i + g, n));
}

/** The stream deltas of words [from, to), sized as the deltas of an answer of `total` words. */
export function* rangePieces(words: Words, from: number, to: number, total: number): Generator<string> {
  const g = deltaSize(total);
  for (let i = from; i < to; i += g) yield words.slice(i, Math.min(i + g, to));
}
