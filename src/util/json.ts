/**
 * The one JSON-object type and guard, and the two lenient scalar readers every codec shares.
 * (A value read from parsed JSON is `unknown` until one of these says otherwise.)
 */

/** A parsed JSON object: string keys, values not yet checked. */
export type JsonObject = Record<string, unknown>;

/** A plain object: not null, not an array. */
export function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The value when it is a string, else undefined. */
export function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

/** The value when it is a finite number, else undefined. */
export function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}
