/** Extracting the last user turn's text from request messages / input items. */

import type { Turn } from "./answer.ts";

/** Plain text of a message content: a string, or parts carrying `text` (tool results recursively). */
export function contentText(c: unknown): string {
  if (typeof c === "string") return c;
  if (!Array.isArray(c)) return "";
  let s = "";
  for (const p of c) {
    if (p === null || typeof p !== "object") continue;
    const part = p as Record<string, unknown>;
    let t = "";
    if (typeof part.text === "string") t = part.text;
    else if (part.type === "tool_result") t = contentText(part.content);
    if (t) s = s ? s + "\n" + t : t;
  }
  return s;
}

/**
 * The trailing run of user-side items (skipping a trailing assistant prefill), joined as text.
 * `side` returns "user", "tool" (a tool result) or undefined (anything else) for an item,
 * `text` its text.
 */
export function lastTurn<T>(
  items: readonly T[],
  side: (item: T) => "user" | "tool" | undefined,
  text: (item: T) => string,
): Turn {
  let end = items.length - 1;
  while (end >= 0 && side(items[end]!) === undefined) end--;
  let start = end;
  while (start > 0 && side(items[start - 1]!) !== undefined) start--;
  let s = "";
  let toolResult = false;
  for (let i = start; i <= end && i >= 0; i++) {
    const item = items[i]!;
    if (side(item) === "tool") toolResult = true;
    const t = text(item);
    if (t) s = s ? s + "\n" + t : t;
  }
  return { text: s, toolResult };
}

/** Returns `v` if it is a non-negative finite number. */
export function numberOr(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : undefined;
}
