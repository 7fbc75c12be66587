/**
 * An operator prompt put before the client's own `system` (beta's server prompt, spec §2.1), on a native
 * Messages body. The client's system text and blocks stay as they are — `cache_control` included — and the
 * prompt goes first as its own text block, so the client's cache breakpoints still cover the same prefix.
 */
import type { ObjectEdits } from "../../util/json_span.ts";

const block = (prompt: string) => ({ type: "text", text: prompt });

/** The parsed body with the prompt before its `system`. */
export function prefixSystem(body: Record<string, unknown>, prompt: string): Record<string, unknown> {
  const system = body.system;
  if (typeof system === "string" && system !== "") {
    return { ...body, system: [block(prompt), { type: "text", text: system }] };
  }
  if (Array.isArray(system) && system.length > 0) return { ...body, system: [block(prompt), ...system] };
  return { ...body, system: prompt };
}

/**
 * The same change on the client's bytes (`edits`: the bytes `body` was parsed from, with what the gateway
 * changed in them so far), without re-serialising the rest: a long conversation is most of them. `body` tells
 * which form `system` has.
 */
export function prefixSystemBytes(
  edits: ObjectEdits,
  body: Record<string, unknown>,
  prompt: string,
): Uint8Array {
  const system = body.system;
  const first = JSON.stringify(block(prompt));
  const span = edits.span("system");
  if (span && typeof system === "string" && system !== "") {
    edits.replace(span, `[${first},{"type":"text","text":${edits.text(span)}}]`);
  } else if (span && Array.isArray(system) && system.length > 0) {
    edits.replace({ start: span.start + 1, end: span.start + 1 }, `${first},`); // just inside the `[`
  } else edits.set("system", prompt, true); // none, empty or null: the prompt is the system, first when added
  return edits.bytes();
}
