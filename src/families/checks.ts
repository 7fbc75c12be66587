/**
 * The small vocabulary family field tables (field_rules.ts, e.g. alpha/field_rules.ts) are written in: each `Check` is plain
 * data, and `runCheck` is its one interpreter. A failed check names the exact path of the bad value
 * (`stream_options.foo`, `metadata.k`) and, where the failure is "a key that is not allowed here"
 * rather than "a bad value", asks for `unsupported_parameter`.
 */

import { isObject } from "../util/json.ts";

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export type Check =
  /** Any value. */
  | { kind: "accept" }
  /** The value is one of these (deep equality; key order of objects does not matter). */
  | { kind: "only-values"; values: readonly Json[] }
  | { kind: "positive-integer" }
  | { kind: "integer" }
  | { kind: "boolean" }
  | { kind: "string"; minLength?: number; maxLength?: number }
  | { kind: "non-empty-array" }
  /** Exactly this object: the same keys with the same values, nothing more. */
  | { kind: "exact-object"; value: { [k: string]: Json } }
  /**
   * An object: known keys with their checks, `required` keys present, and other keys either
   * refused (`unsupported_parameter` at their path), kept unchecked, or checked with one rule.
   */
  | {
    kind: "object";
    fields?: Readonly<Record<string, Check>>;
    required?: readonly string[];
    otherKeys: "refuse" | "keep" | Check;
    maxKeys?: number;
    maxKeyLength?: number;
  }
  | { kind: "any-of"; options: readonly Check[] }
  | { kind: "array-of"; item: Check };

export interface CheckFailure {
  /** Path below the field ("" = the field itself), e.g. ".include_obfuscation". */
  path: string;
  /** Set when the failure is a key not allowed here; otherwise the row's code applies. */
  unsupported?: true;
}

/** Structural equality of JSON values (object key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length &&
      a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (!isObject(a) || !isObject(b)) return false;
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
}

/** `pattern` matches `v` when equal, or when both are objects and every key of the pattern is equal in `v`. */
export function jsonMatches(v: unknown, pattern: Json): boolean {
  if (isObject(pattern)) {
    return isObject(v) &&
      Object.entries(pattern).every(([k, p]) => Object.hasOwn(v, k) && jsonEqual(v[k], p));
  }
  return jsonEqual(v, pattern);
}

const fail = (path = ""): CheckFailure => ({ path });

/** null when the value passes; otherwise where it failed. */
export function runCheck(check: Check, v: unknown, path = ""): CheckFailure | null {
  switch (check.kind) {
    case "accept":
      return null;
    case "only-values":
      return check.values.some((x) => jsonEqual(v, x)) ? null : fail(path);
    case "positive-integer":
      return typeof v === "number" && Number.isInteger(v) && v > 0 ? null : fail(path);
    case "integer":
      return typeof v === "number" && Number.isInteger(v) ? null : fail(path);
    case "boolean":
      return typeof v === "boolean" ? null : fail(path);
    case "string":
      return typeof v === "string" && v.length >= (check.minLength ?? 0) &&
          v.length <= (check.maxLength ?? Infinity)
        ? null
        : fail(path);
    case "non-empty-array":
      return Array.isArray(v) && v.length > 0 ? null : fail(path);
    case "exact-object":
      return jsonEqual(v, check.value) ? null : fail(path);
    case "any-of":
      return check.options.some((c) => runCheck(c, v, path) === null) ? null : fail(path);
    case "array-of": {
      if (!Array.isArray(v)) return fail(path);
      for (let i = 0; i < v.length; i++) {
        const f = runCheck(check.item, v[i], `${path}.${i}`);
        if (f) return f;
      }
      return null;
    }
    case "object":
      return runObject(check, v, path);
  }
}

function runObject(check: Extract<Check, { kind: "object" }>, v: unknown, path: string): CheckFailure | null {
  if (!isObject(v)) return fail(path);
  const keys = Object.keys(v);
  if (check.maxKeys !== undefined && keys.length > check.maxKeys) return fail(path);
  for (const k of check.required ?? []) if (v[k] === undefined) return fail(`${path}.${k}`);
  for (const k of keys) {
    const sub = `${path}.${k}`;
    if (check.maxKeyLength !== undefined && k.length > check.maxKeyLength) return fail(sub);
    const known = check.fields?.[k];
    const rule = known ?? check.otherKeys;
    if (rule === "refuse") return { path: sub, unsupported: true };
    if (rule === "keep") continue;
    const f = runCheck(rule, v[k], sub);
    if (f) return f;
  }
  return null;
}
