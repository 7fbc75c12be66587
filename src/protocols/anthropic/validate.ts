/** Small validators for client bodies: each throws invalid_request naming the offending field. */
import { fieldError } from "../../errors/gateway_error.ts";
import { isObject, type JsonObject } from "../../util/json.ts";

export function bad(param: string, detail?: string): never {
  throw fieldError("invalid_request", param, detail);
}

export function object(v: unknown, param: string): JsonObject {
  return isObject(v) ? v : bad(param);
}

export function array(v: unknown, param: string): unknown[] {
  return Array.isArray(v) ? v : bad(param);
}

export function string(v: unknown, param: string): string {
  return typeof v === "string" ? v : bad(param);
}

export function nonEmptyString(v: unknown, param: string): string {
  return typeof v === "string" && v.length > 0 ? v : bad(param);
}

export function optString(v: unknown, param: string): string | undefined {
  return v === undefined ? undefined : string(v, param);
}

export function optBoolean(v: unknown, param: string): boolean | undefined {
  if (v === undefined) return undefined;
  return typeof v === "boolean" ? v : bad(param);
}

/** A finite number within [min, max]; undefined when absent. */
export function optNumber(v: unknown, param: string, min: number, max: number): number | undefined {
  if (v === undefined) return undefined;
  return typeof v === "number" && Number.isFinite(v) && v >= min && v <= max ? v : bad(param);
}

/** An integer ≥ min; undefined when absent. */
export function optInteger(v: unknown, param: string, min: number): number | undefined {
  if (v === undefined) return undefined;
  return typeof v === "number" && Number.isInteger(v) && v >= min ? v : bad(param);
}
