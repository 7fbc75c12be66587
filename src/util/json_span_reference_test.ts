import assert from "node:assert/strict";
import { membersWithinDepth } from "./json_depth.ts";
import { scanObject, type Span } from "./json_span.ts";

const enc = new TextEncoder();

/** The gateway's repeated-name check (engine/generate.ts): more members in the text than JSON.parse kept. */
function dup(json: string): boolean {
  const text = `{"v": ${json}}`; // any value, as the member of an object
  return scanObject(enc.encode(text)).members > membersWithinDepth(JSON.parse(text), 1_000);
}

Deno.test("repeated names: anywhere, however spelled, with colons anywhere", () => {
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
  // Not an escape but a backslash and "u003a"; backslashes before a quote.
  assert.equal(dup(`{"path":"C:\\\\u003a"}`), false);
  assert.equal(dup(`{"a":"\\\\","a":"\\\"x"}`), true);
  assert.equal(dup(`{"a\\\\":"\\\\\\\"","a":1}`), false);
});

/**
 * A reference: a small JSON reader of its own, no JSON.parse in it (the test's oracle). Whether an object
 * repeats a decoded name, whether a name is written with an escape, and where each top-level member's value
 * is, in UTF-8 bytes (the last of a name).
 */
function referenceRead(text: string): { repeats: boolean; escapedNames: boolean; top: Map<string, Span> } {
  let i = 0;
  let repeats = false;
  let escapedNames = false;
  const top = new Map<string, Span>();
  const bytesTo = (at: number) => enc.encode(text.slice(0, at)).length;
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
  const value = (depth: number): void => {
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      const names = new Set<string>();
      ws();
      while (text[i] !== "}") {
        ws();
        const at = i;
        const name = str();
        if (text.slice(at, i).includes("\\")) escapedNames = true;
        if (names.has(name)) repeats = true;
        names.add(name);
        ws();
        i++; // ':'
        ws();
        const start = i;
        value(depth + 1);
        if (depth === 0) top.set(name, { start: bytesTo(start), end: bytesTo(i) });
        ws();
        if (text[i] === ",") i++;
        ws();
      }
      i++;
    } else if (c === "[") {
      i++;
      ws();
      while (text[i] !== "]") {
        value(depth + 1);
        ws();
        if (text[i] === ",") i++;
        ws();
      }
      i++;
    } else if (c === '"') str();
    else while (i < text.length && !",}] \t\n\r".includes(text[i]!)) i++;
  };
  value(0);
  return { repeats, escapedNames, top };
}

/** A seeded generator of JSON texts with repeats, escapes, backslashes, colons and spaces around tokens. */
function randomJson(seed: number, object = false): string {
  let s = seed;
  const rnd = (n: number) => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s % n;
  };
  const chars = ["a", ":", ":", ":", "é", '"', "\n", "m", "\\", "{", "]", "😀"];
  const decoded = () => Array.from({ length: rnd(5) }, () => chars[rnd(chars.length)]!).join("");
  /** A string as JSON text, each character in a form picked at random (as itself, or escaped). */
  const encode = (plain: string) => {
    let out = "";
    for (const c of plain) {
      const form = rnd(4);
      if (form === 0) {
        for (let i = 0; i < c.length; i++) { // each UTF-16 unit: a pair as two escapes
          const hex = c.charCodeAt(i).toString(16).padStart(4, "0");
          out += `\\u${rnd(2) ? hex : hex.toUpperCase()}`;
        }
      } else if (c === '"') out += '\\"';
      else if (c === "\n") out += "\\n";
      else if (c === "\\") out += "\\\\";
      else if (form === 1 && c === ":") out += "\\u003A";
      else out += c;
    }
    return `"${out}"`;
  };
  const text = () => encode(decoded());
  const spaces = ["", "", " ", "\n\t", "\r\n  "];
  const ws = () => spaces[rnd(spaces.length)]!;
  const value = (depth: number): string => {
    const kind = depth === 0 && object ? 4 : depth > 3 ? rnd(3) : rnd(5);
    if (kind === 0) return text();
    if (kind === 1) return String(rnd(1000) - 500);
    if (kind === 2) return ["true", "false", "null"][rnd(3)]!;
    if (kind === 3) {
      return `[${ws()}${Array.from({ length: rnd(4) }, () => value(depth + 1)).join(`${ws()},${ws()}`)}]`;
    }
    const names: string[] = [];
    const members: string[] = [];
    for (let n = rnd(5); n > 0; n--) {
      // A repeat is the same name, written again in forms of its own.
      const name = names.length > 0 && rnd(4) === 0 ? names[rnd(names.length)]! : decoded();
      names.push(name);
      members.push(`${ws()}${encode(name)}${ws()}:${ws()}${value(depth + 1)}${ws()}`);
    }
    return `{${members.join(",")}${ws()}}`;
  };
  return value(0);
}

Deno.test("repeated names: scanObject agrees with a reference reader on 5,000 random texts", () => {
  let repeats = 0;
  for (let seed = 1; seed <= 5_000; seed++) {
    const json = randomJson(seed);
    const expected = referenceRead(json).repeats;
    if (expected) repeats++;
    assert.equal(dup(json), expected, json);
  }
  assert.ok(repeats > 200, `only ${repeats} texts with a repeat`);
});

Deno.test("top-level values and escaped names: scanObject reads them as a reference reader does, on 5,000 random objects", () => {
  let members = 0;
  let escaped = 0;
  for (let seed = 1; seed <= 5_000; seed++) {
    const json = ` ${randomJson(seed, true)} `;
    const raw = enc.encode(json);
    const scan = scanObject(raw);
    const reference = referenceRead(json);
    assert.equal(scan.brace, 1, json);
    assert.deepEqual(scan.spans, reference.top, json);
    assert.equal(scan.escapedNames, reference.escapedNames, json);
    if (scan.escapedNames) escaped++;
    members += scan.spans.size;
  }
  assert.ok(members > 3_000, `only ${members} top-level members`);
  assert.ok(escaped > 500 && escaped < 4_500, `${escaped} with a name written with an escape`);
});
