/**
 * An operator prompt put before the client's own `system` (beta's server prompt, spec §2.1), on a native
 * Messages body. The client's system text and blocks stay as they are — `cache_control` included — and the
 * prompt goes first as its own text block, so the client's cache breakpoints still cover the same prefix.
 */
import { type Span, spliceBytes, topLevelValueSpan } from "../../util/json_span.ts";

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
 * The same change on the client's bytes, without re-serialising the rest (a long conversation is most of
 * them). `body` is what the bytes parsed to; it tells which form `system` has.
 */
export function prefixSystemBytes(
  raw: Uint8Array,
  body: Record<string, unknown>,
  prompt: string,
): Uint8Array {
  const system = body.system;
  const first = JSON.stringify(block(prompt));
  const span = topLevelValueSpan(raw, "system");
  if (!span) {
    // Right after the opening brace: the body has other members (model, messages), so a comma follows.
    const brace = raw.indexOf(0x7b);
    return spliceBytes(raw, { start: brace + 1, end: brace + 1 }, `"system":${JSON.stringify(prompt)},`);
  }
  if (typeof system === "string" && system !== "") {
    const client = new TextDecoder().decode(raw.subarray(span.start, span.end));
    return spliceBytes(raw, span, `[${first},{"type":"text","text":${client}}]`);
  }
  if (Array.isArray(system) && system.length > 0) {
    const open: Span = { start: span.start + 1, end: span.start + 1 }; // just inside the `[`
    return spliceBytes(raw, open, `${first},`);
  }
  return spliceBytes(raw, span, JSON.stringify(prompt));
}
