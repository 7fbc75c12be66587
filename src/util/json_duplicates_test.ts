import assert from "node:assert/strict";
import { hasDuplicateMembers } from "./json_duplicates.ts";

const dup = (text: string) => hasDuplicateMembers(text, JSON.parse(text));

Deno.test("hasDuplicateMembers: a repeated name anywhere, however spelled, with colons anywhere", () => {
  assert.equal(dup(`{"model":"k3","max_tokens":16,"messages":[{"role":"user","content":"a: b"}]}`), false);
  assert.equal(dup(`{"max_tokens":50000,"model":"k3","max_tokens":16}`), true);
  assert.equal(dup(`{"messages":[{"role":"user","content":"big","content":"small"}]}`), true);
  assert.equal(dup(`{"a":{"b":{"c":1,"c":2}}}`), true);
  // The same name escaped: JSON.parse reads both as "model".
  assert.equal(dup(`{"model":"cheap","m\\u006fdel":"dear"}`), true);
  // Colons in names and values, the dropped member's included.
  assert.equal(dup(`{"a:b":"c:d","e":["f:","::"]}`), false);
  assert.equal(dup(`{"k":"x:y:z","k":"w"}`), true);
  assert.equal(dup(`{"k":"w","k":"x:y:z"}`), true);
  // Escaped colons, kept or dropped.
  assert.equal(dup(`{"k\\u003a":"\\u003A\\u003a:"}`), false);
  assert.equal(dup(`{"k":"\\u003a\\u003a","k":"v"}`), true);
  assert.equal(dup(`{"k":"v","k":"\\u003a"}`), true);
  assert.equal(dup(`{"k":"v","k":"\\u003A"}`), true);
  assert.equal(dup(`{"k":"v","k\\u003A":"\\u003A","k":{"\\u003a":":"}}`), true);
  assert.equal(dup(`{"__proto__":1,"__proto__":2}`), true);
  assert.equal(dup(`{"__proto__":{"x":1}}`), false);
  assert.equal(dup(` { } `), false);
  assert.equal(dup(`[{"a":1},{"a":1}]`), false);
  // Not an escape but a backslash and "u003a": reported as a repeat (the safe way: serialised again).
  assert.equal(dup(`{"path":"C:\\\\u003a"}`), true);
});

/** A reference: a small JSON reader that compares each object's decoded names (the test's oracle). */
function referenceHasDuplicates(text: string): boolean {
  let i = 0;
  let found = false;
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i]!)) i++;
  };
  const str = (): string => {
    i++; // the opening quote
    let out = "";
    while (text[i] !== '"') {
      if (text[i] === "\\") {
        const e = text[i + 1]!;
        if (e === "u") {
          out += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
          i += 6;
        } else {
          out += ({ n: "\n", t: "\t", r: "\r", b: "\b", f: "\f" } as Record<string, string>)[e] ?? e;
          i += 2;
        }
      } else out += text[i++];
    }
    i++;
    return out;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      const names = new Set<string>();
      ws();
      while (text[i] !== "}") {
        ws();
        const name = str();
        if (names.has(name)) found = true;
        names.add(name);
        ws();
        i++; // ':'
        value();
        ws();
        if (text[i] === ",") i++;
        ws();
      }
      i++;
    } else if (c === "[") {
      i++;
      ws();
      while (text[i] !== "]") {
        value();
        ws();
        if (text[i] === ",") i++;
        ws();
      }
      i++;
    } else if (c === '"') str();
    else while (i < text.length && !",}] \t\n\r".includes(text[i]!)) i++;
  };
  value();
  return found;
}

/** A seeded generator of JSON texts with repeats, escapes and colons (no backslash written as itself). */
function randomJson(seed: number): string {
  let s = seed;
  const rnd = (n: number) => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s % n;
  };
  const chars = ["a", ":", ":", ":", "é", '"', "\n", "m"];
  const decoded = () => Array.from({ length: rnd(5) }, () => chars[rnd(chars.length)]!).join("");
  /** A string as JSON text, each character in a form picked at random (as itself, or escaped). */
  const encode = (plain: string) => {
    let out = "";
    for (const c of plain) {
      const form = rnd(4);
      if (form === 0) {
        const hex = c.charCodeAt(0).toString(16).padStart(4, "0");
        out += `\\u${rnd(2) ? hex : hex.toUpperCase()}`;
      } else if (c === '"') out += '\\"';
      else if (c === "\n") out += "\\n";
      else if (form === 1 && c === ":") out += "\\u003A";
      else out += c;
    }
    return `"${out}"`;
  };
  const text = () => encode(decoded());
  const value = (depth: number): string => {
    const kind = depth > 3 ? rnd(3) : rnd(5);
    if (kind === 0) return text();
    if (kind === 1) return String(rnd(1000) - 500);
    if (kind === 2) return ["true", "false", "null"][rnd(3)]!;
    if (kind === 3) return `[${Array.from({ length: rnd(4) }, () => value(depth + 1)).join(",")}]`;
    const names: string[] = [];
    const members: string[] = [];
    for (let n = rnd(5); n > 0; n--) {
      // A repeat is the same name, written again in forms of its own.
      const name = names.length > 0 && rnd(4) === 0 ? names[rnd(names.length)]! : decoded();
      names.push(name);
      members.push(`${encode(name)} :${value(depth + 1)}`);
    }
    return `{${members.join(", ")}}`;
  };
  return value(0);
}

Deno.test("hasDuplicateMembers agrees with a reference reader on 5,000 random texts", () => {
  let repeats = 0;
  for (let seed = 1; seed <= 5_000; seed++) {
    const text = randomJson(seed);
    const expected = referenceHasDuplicates(text);
    if (expected) repeats++;
    assert.equal(hasDuplicateMembers(text, JSON.parse(text)), expected, text);
  }
  assert.ok(repeats > 200, `only ${repeats} texts with a repeat`);
});
