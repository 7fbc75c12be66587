/** Deterministic rewrite of foreign tool-call ids to Anthropic's `^[a-zA-Z0-9_-]+$` (protocols §5.4). */

const VALID = /^[a-zA-Z0-9_-]+$/;

/** FNV-1a 32-bit, hex: a short stable suffix that keeps rewritten ids distinct. */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}

/** Valid ids are kept; others get invalid characters replaced and a hash of the original appended. */
export function sanitizeToolId(id: string): string {
  if (VALID.test(id)) return id;
  const base = id.replace(/[^a-zA-Z0-9_-]/g, "_");
  return `${base || "toolu"}_${fnv1a(id)}`;
}

export function isValidToolId(id: string): boolean {
  return VALID.test(id);
}
