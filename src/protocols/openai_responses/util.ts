/** Small value guards shared by the Responses codec files. */

export type JsonObject = Record<string, unknown>;

export function isRecord(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

export function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

/** Absent or explicit JSON null (both mean "not given" for optional request fields). */
export function absent(v: unknown): v is undefined | null {
  return v === undefined || v === null;
}
