/**
 * Internal stream events: every upstream stream decoder emits these, every surface stream encoder
 * consumes them. One model for all directions keeps the codecs N+M instead of N×M.
 *
 * Ordering contract (decoders guarantee it, encoders rely on it):
 * - `start` comes first, exactly once.
 * - text / reasoning / tool-call events follow in the order the upstream produced them; tool calls
 *   are numbered by `index` (0, 1, … counting tool calls only); argument deltas of different calls
 *   may interleave (Chat Completions upstreams do this).
 * - `usage` may appear any number of times; each carries cumulative values, merge field by field,
 *   last value wins.
 * - `finish` comes last on success, exactly once, after all content.
 * - `error` is an in-band upstream failure; nothing follows it.
 */
import type { IRUsage } from "./usage.ts";

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
  | { type: "usage"; usage: Partial<IRUsage> }
  | { type: "finish"; reason: IRStopReason; stopSequence?: string }
  | { type: "error"; status?: number; upstreamType?: string; upstreamCode?: string; message: string };
