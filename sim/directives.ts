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
}

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
