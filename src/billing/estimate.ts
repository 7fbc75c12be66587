/**
 * The input-token estimate used by count_tokens and by the reserve (spec §8.1 p.2): one walk over the
 * request JSON counting the characters the upstream will tokenise — string values, object keys (a tool
 * schema's property names are billed too), numbers and literals — plus a fixed overhead per object.
 * Images and files count as large fixed blocks and their (base64) payload is not walked. Deliberately errs
 * high. The walk is iterative with no depth limit: anything the upstream bills must be visible here, or a
 * request could spend beyond its hold (docs/billing.md).
 */

/** Tokens charged for one image block in the estimate. */
export const IMAGE_TOKENS = 1_600;
/** Tokens for one file reference before its extracted text is known. */
export const FILE_TOKENS = 4_000;
/** Fixed overhead per message/object/array (role markers, separators). */
const OBJECT_TOKENS = 3;
/** Characters per token; 3 over-estimates English (≈4) and is close for Cyrillic. */
const CHARS_PER_TOKEN = 3;

const IMAGE_TYPES = new Set(["image", "image_url", "input_image"]);
const FILE_TYPES = new Set(["input_file", "file", "document"]);
/** Top-level fields that are not prompt text. */
const SKIP_TOP = new Set([
  "model",
  "stream",
  "stream_options",
  "max_tokens",
  "max_completion_tokens",
  "max_output_tokens",
]);

export function estimateInputTokens(body: Record<string, unknown>): number {
  let chars = 0;
  let tokens = 0;
  const stack: unknown[] = [];
  for (const k in body) if (!SKIP_TOP.has(k)) stack.push(body[k]);
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === "string") {
      chars += v.length + 2; // the quotes are characters of the serialised prompt too
      continue;
    }
    if (v === null || typeof v !== "object") {
      chars += String(v).length + 1;
      continue;
    }
    tokens += OBJECT_TOKENS;
    if (Array.isArray(v)) {
      for (const x of v) stack.push(x);
      continue;
    }
    const o = v as Record<string, unknown>;
    const type = o.type;
    if (typeof type === "string") {
      if (IMAGE_TYPES.has(type)) {
        tokens += IMAGE_TOKENS;
        continue;
      }
      if (FILE_TYPES.has(type) && !(type === "document" && isTextDocument(o))) {
        tokens += FILE_TOKENS;
        continue;
      }
    }
    for (const k in o) {
      chars += k.length + 3;
      stack.push(o[k]);
    }
  }
  return tokens + Math.ceil(chars / CHARS_PER_TOKEN);
}

function isTextDocument(o: Record<string, unknown>): boolean {
  const src = o.source as Record<string, unknown> | undefined;
  return src?.type === "text" || src?.type === "content";
}

/** Output tokens estimated from delivered text when the upstream never reported usage. */
export function estimateOutputTokens(chars: number): number {
  return Math.ceil(chars / CHARS_PER_TOKEN);
}
