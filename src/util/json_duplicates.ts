/**
 * Whether a JSON text names a member twice in one object, at any depth, told from the text and what JSON.parse
 * made of it, without parsing again. JSON.parse keeps the last of a repeated member and an upstream's parser
 * may keep the first, so the client's own bytes go upstream only when every name is unique (engine/generate.ts
 * `nativeBody`): otherwise the upstream could run another model, a longer prompt or a larger output budget than
 * the gateway checked, estimated and held for.
 *
 * Counted, not tokenised: each member of the text has exactly one `:` outside strings, and a `:` inside a string
 * is either written as it is or escaped as `\u003a`. So the text's members number
 *   (`:` in the text) − (`:` in the strings JSON.parse kept) + (escaped colons among them)
 * plus the colons of the strings a repeat dropped, never fewer; counting every `\u003a` sequence of the text in
 * place of the escaped colons (a superset: `\\u003a` is a backslash and "u003a") keeps that a bound from above.
 * The parsed value holds Σ keys members: more in the text than that means a repeated name. A repeat is always
 * found; a text without one can only be reported as having one when it holds `\u003a` other than as a kept
 * string's escaped colon — the safe way (the body is serialised again).
 */
export function hasDuplicateMembers(text: string, parsed: unknown): boolean {
  let members = 0;
  let keptColons = 0;
  const stack: unknown[] = [parsed];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === "string") {
      keptColons += colonsIn(v);
      continue;
    }
    if (v === null || typeof v !== "object") continue;
    if (Array.isArray(v)) {
      for (const x of v) stack.push(x);
      continue;
    }
    for (const k in v) {
      members++;
      keptColons += colonsIn(k);
      stack.push((v as Record<string, unknown>)[k]);
    }
  }
  return colonsIn(text) - keptColons + escapedColonsIn(text) > members;
}

function colonsIn(s: string): number {
  let n = 0;
  for (let i = s.indexOf(":"); i >= 0; i = s.indexOf(":", i + 1)) n++;
  return n;
}

/** `\u003a` and `\u003A` sequences (escapes or not). */
function escapedColonsIn(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\\u003"); i >= 0; i = text.indexOf("\\u003", i + 5)) {
    const c = text.charCodeAt(i + 5);
    if (c === 0x61 || c === 0x41) n++;
  }
  return n;
}
