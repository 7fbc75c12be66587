/**
 * Family rules on the client's raw body, before it is decoded (§4.2, §4.5, §4.6): each family
 * validates and rewrites what the spec demands for its models on the given surface.
 * The result replaces the body for both the native pass-through and the translated path. A rule that
 * changes anything returns a new object (never mutates in place): the engine forwards the client's
 * original bytes when the body comes back as the same object.
 */
import type { ModelEntry } from "../catalog/models.ts";
import type { ProtocolName } from "../protocols/codec.ts";
import { alphaRules } from "./alpha/rules.ts";

export function applyFamilyRules(
  model: ModelEntry,
  surface: ProtocolName,
  body: Record<string, unknown>,
): Record<string, unknown> {
  switch (model.family) {
    case "alpha":
      return alphaRules(model, surface, body);
    case "beta":
    case "gamma":
    case "eta":
    case "theta":
      return body;
  }
}
