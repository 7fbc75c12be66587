/** Family alpha's field rules (§4.2). */
import type { ModelEntry } from "../../catalog/models.ts";
import type { ProtocolName } from "../../protocols/codec.ts";

export function alphaRules(
  _model: ModelEntry,
  _surface: ProtocolName,
  body: Record<string, unknown>,
): Record<string, unknown> {
  return body;
}
