/**
 * Nesting depth of a parsed JSON value, measured without recursion and stopping as soon as the bound is
 * passed, so a hostile body costs at most one walk of its first `max + 1` levels per branch. The same walk
 * counts the members its objects kept, which the repeated-name check compares with the text
 * (json_span.ts `scanObject`).
 */

/** Deepest nesting a generation body may have (docs/billing.md, Estimate). */
export const MAX_BODY_DEPTH = 100;

/**
 * The members of every object in `value` (each object's own names, as JSON.parse kept them), or -1 when it
 * nests objects/arrays deeper than `max` levels (the top-level object is level 1).
 */
export function membersWithinDepth(value: unknown, max: number): number {
  if (value === null || typeof value !== "object") return 0;
  // Only objects and arrays are stacked, each beside its depth (no pair allocated per value): a large prompt's
  // strings and numbers are looked at once and left.
  const nodes: object[] = [value];
  const depths: number[] = [1];
  let members = 0;
  while (nodes.length > 0) {
    const v = nodes.pop()!;
    const depth = depths.pop()!;
    if (depth > max) return -1;
    if (Array.isArray(v)) {
      for (const x of v) {
        if (x !== null && typeof x === "object") {
          nodes.push(x);
          depths.push(depth + 1);
        }
      }
    } else {
      for (const k in v) {
        members++;
        const x = (v as Record<string, unknown>)[k];
        if (x !== null && typeof x === "object") {
          nodes.push(x);
          depths.push(depth + 1);
        }
      }
    }
  }
  return members;
}

/** True when `value` nests objects/arrays deeper than `max` levels (the top-level object is level 1). */
export function jsonDepthExceeds(value: unknown, max: number): boolean {
  return membersWithinDepth(value, max) < 0;
}
