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

/** A table indexed by surface and field, built once per table. */
export interface CompiledTable {
  /** Per surface, each field's rows with their place in the table: a body is walked by its own members (a few)
   *  rather than by the table's rows (dozens, each a lookup of a name the body mostly lacks), and the rows it
   *  meets apply in table order. */
  bySurface: Record<ProtocolName, Map<string, PlacedRule[]>>;
  closed: FieldTable["closed"];
}

interface PlacedRule {
  at: number;
  row: FieldRule;
}

export function compileFieldTable(table: FieldTable): CompiledTable {
  const bySurface: CompiledTable["bySurface"] = {
    openai_chat: new Map(),
    openai_responses: new Map(),
    anthropic: new Map(),
  };
  for (const [at, row] of table.rows.entries()) {
    for (const s of row.surfaces) {
      const rows = bySurface[s].get(row.field);
      if (rows) rows.push({ at, row });
      else bySurface[s].set(row.field, [{ at, row }]);
    }
  }
  return { bySurface, closed: table.closed };
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
  const rules = table.bySurface[surface];
  // The body's members with a row, and on a closed list the first one without any refused before any check.
  const met: PlacedRule[] = [];
  for (const field in body) {
    const rows = rules.get(field);
    if (rows) { for (const r of rows) met.push(r); }
    else if (table.closed) refuse(table.closed.code, field, table.closed.detail(field));
  }
  if (met.length === 0) return body;
  if (met.length > 1) met.sort((a, b) => a.at - b.at);
  const drop: string[] = [];
  for (const { row } of met) {
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
