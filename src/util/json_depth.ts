/**
 * Nesting depth of a parsed JSON value, measured without recursion and stopping as soon as the bound is
 * passed, so a hostile body costs at most one walk of its first `max + 1` levels per branch.
 */

/** Deepest nesting a generation body may have (docs/billing.md, Estimate). */
export const MAX_BODY_DEPTH = 100;

/** True when `value` nests objects/arrays deeper than `max` levels (the top-level object is level 1). */
export function jsonDepthExceeds(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth > max) return true;
    if (Array.isArray(v)) { for (const x of v) stack.push([x, depth + 1]); }
    else for (const k in v) stack.push([(v as Record<string, unknown>)[k], depth + 1]);
  }
  return false;
}
