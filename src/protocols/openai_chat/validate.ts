/** Small helpers for strict client-body validation with exact `param` paths. */
import { type ErrorCode } from "../../errors/codes.ts";
import { fieldError } from "../../errors/gateway_error.ts";
import type { JsonObject } from "../../util/json.ts";

/** Throws the 400 for one field (default code invalid_request). */
export function fail(param: string, code: ErrorCode = "invalid_request", detail?: string): never {
  throw fieldError(code, param, detail);
}

/** An optional string field: undefined when absent or null, else it must be a string. */
export function optString(o: JsonObject, key: string, param: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") fail(param);
  return v;
}

/** An optional boolean field: undefined when absent or null, else it must be a boolean. */
export function optBoolean(o: JsonObject, key: string, param: string): boolean | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "boolean") fail(param);
  return v;
}
