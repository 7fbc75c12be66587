/**
 * Field rules as data, one table per family (alpha: spec §4.2), read by one interpreter on the client's raw
 * body before it is decoded. A list is open (a field without a row is forwarded unchanged) or closed (a
 * field without a row on this surface is refused with the table's code, e.g. gamma/eta's
 * `delta_parameter_unavailable`, spec §4.6).
 *
 * How a row is read, for a field present in the body:
 * - `null` counts as "not sent" and is forwarded as it is (OpenAI semantics: null = default),
 *   except on `remove` rows (removed too) and rows with `nullRefused` (required fields).
 * - `onlyModels`: the field is allowed only on these models; elsewhere 400 `unsupported_parameter`.
 * - `refusedOn`: these values are refused on these models (400 with the row's `code`).
 * - `check`: the value must pass it; otherwise 400 with the row's `code` (a key that is not allowed
 *   inside an object: `unsupported_parameter`, or the closed list's code), `param` = the field or the path
 *   inside it.
 * - `remove`: the field is dropped before anything else sees the body.
 * Every refusal carries the row's Russian `detail`, so a client (and a test) sees which rule refused.
 *
 * The result keeps every accepted value as it was sent; only `remove` rows drop a field. Nothing removed →
 * the same object back, which is how the engine knows it may forward the client's own bytes.
 */
import type { ModelEntry } from "../catalog/models.ts";
import type { ErrorCode } from "../errors/codes.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import type { ProtocolName } from "../protocols/codec.ts";
import { type Check, type Json, jsonMatches, runCheck } from "./checks.ts";

export type RuleName =
  | "required-non-empty-array"
  | "accept"
  | "remove"
  | "only-values"
  | "positive-integer"
  | "boolean"
  | "non-empty-string"
  | "model-restricted"
  | "exact-object"
  | "shape-check";

export interface FieldRule {
  field: string;
  surfaces: readonly ProtocolName[];
  /** The row's rule, as the table summary names it. */
  rule: RuleName;
  check: Check;
  remove?: true;
  onlyModels?: readonly string[];
  refusedOn?: { models: readonly string[]; values: readonly Json[] };
  nullRefused?: true;
  code: ErrorCode;
  /** Russian, appended to the error message: which rule refused the value. */
  detail: string;
}

export interface FieldTable {
  rows: readonly FieldRule[];
  /**
   * A closed list: a field with no row on the request's surface is refused with this code, and a detail that
   * names the field (clients such as Claude Code print only the message).
   */
  closed?: { code: ErrorCode; detail: (field: string) => string };
}

/** A table indexed by surface, built once per table. */
export interface CompiledTable {
  bySurface: Record<ProtocolName, FieldRule[]>;
  known: Record<ProtocolName, Set<string>>;
  closed: FieldTable["closed"];
}

export function compileFieldTable(table: FieldTable): CompiledTable {
  const bySurface: CompiledTable["bySurface"] = { openai_chat: [], openai_responses: [], anthropic: [] };
  for (const row of table.rows) for (const s of row.surfaces) bySurface[s].push(row);
  const known = {} as CompiledTable["known"];
  for (const s of Object.keys(bySurface) as ProtocolName[]) {
    known[s] = new Set(bySurface[s].map((r) => r.field));
  }
  return { bySurface, known, closed: table.closed };
}

function refuse(code: ErrorCode, param: string, detail: string): never {
  throw new GatewayError(code, detail === "" ? { param } : { param, detail });
}

export function applyFieldRules(
  table: CompiledTable,
  model: ModelEntry,
  surface: ProtocolName,
  body: Record<string, unknown>,
): Record<string, unknown> {
  if (table.closed) {
    for (const field in body) {
      if (!table.known[surface].has(field)) refuse(table.closed.code, field, table.closed.detail(field));
    }
  }
  const drop: string[] = [];
  for (const row of table.bySurface[surface]) {
    const v = body[row.field];
    if (v === undefined) continue;
    if (row.remove) {
      drop.push(row.field);
      continue;
    }
    if (v === null) {
      if (row.nullRefused) refuse(row.code, row.field, row.detail);
      continue;
    }
    if (row.onlyModels && !row.onlyModels.includes(model.id)) {
      refuse("unsupported_parameter", row.field, row.detail);
    }
    if (row.refusedOn?.models.includes(model.id) && row.refusedOn.values.some((x) => jsonMatches(v, x))) {
      refuse(row.code, row.field, row.detail);
    }
    const failure = runCheck(row.check, v);
    if (failure) {
      // A key not allowed inside an object: on a closed list that is the list's own refusal too.
      const unsupported = table.closed?.code ?? "unsupported_parameter";
      refuse(failure.unsupported ? unsupported : row.code, row.field + failure.path, row.detail);
    }
  }
  if (drop.length === 0) return body;
  const out = { ...body };
  for (const f of drop) delete out[f];
  return out;
}
