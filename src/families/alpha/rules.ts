/**
 * Family alpha's field rules (§4.2) on the client's raw body: the one interpreter of the table in
 * field_rules.ts. The result keeps every field without a row (open field list) and every accepted
 * value as it was sent; only `remove` rows drop a field. Nothing is removed → the same object.
 */
import type { ModelEntry } from "../../catalog/models.ts";
import { GatewayError } from "../../errors/gateway_error.ts";
import type { ProtocolName } from "../../protocols/codec.ts";
import { jsonMatches, runCheck } from "./checks.ts";
import { ALPHA_FIELD_RULES, type FieldRule } from "./field_rules.ts";

const BY_SURFACE: Record<ProtocolName, FieldRule[]> = {
  openai_chat: [],
  openai_responses: [],
  anthropic: [],
};
for (const row of ALPHA_FIELD_RULES) for (const s of row.surfaces) BY_SURFACE[s].push(row);

function refuse(row: FieldRule, code: FieldRule["code"], param: string): never {
  throw new GatewayError(code, row.detail === "" ? { param } : { param, detail: row.detail });
}

export function alphaRules(
  model: ModelEntry,
  surface: ProtocolName,
  body: Record<string, unknown>,
): Record<string, unknown> {
  const drop: string[] = [];
  for (const row of BY_SURFACE[surface]) {
    const v = body[row.field];
    if (v === undefined) continue;
    if (row.remove) {
      drop.push(row.field);
      continue;
    }
    if (v === null) {
      if (row.nullRefused) refuse(row, row.code, row.field);
      continue;
    }
    if (row.onlyModels && !row.onlyModels.includes(model.id)) {
      refuse(row, "unsupported_parameter", row.field);
    }
    if (row.refusedOn?.models.includes(model.id) && row.refusedOn.values.some((x) => jsonMatches(v, x))) {
      refuse(row, row.code, row.field);
    }
    const failure = runCheck(row.check, v);
    if (failure) {
      refuse(row, failure.unsupported ? "unsupported_parameter" : row.code, row.field + failure.path);
    }
  }
  if (drop.length === 0) return body;
  const out = { ...body };
  for (const f of drop) delete out[f];
  return out;
}
