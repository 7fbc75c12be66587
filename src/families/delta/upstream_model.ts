/**
 * What a gamma/eta id asks of the upstream (spec §2.1, §8.1 p.7): the effort level and fast mode come from
 * the id, never from request fields (the closed list refuses `reasoning` and `reasoning_effort`). The upstream
 * serves one model per family; eta's effort is its `reasoning.effort`, and a `-fast` id runs on the
 * provider's priority tier (`service_tier: "priority"`), which is what makes it faster and dearer.
 *
 * | id                                   | upstream `model` | upstream fields                                  |
 * | ------------------------------------ | ---------------- | ------------------------------------------------ |
 * | `gamma-2.5`                          | `gamma-2.5`      | —                                                |
 * | `gamma-2.5-fast`                     | `gamma-2.5`      | `service_tier: "priority"`                       |
 * | `delta-eta-4.6-<effort>`             | `eta-4.6`        | `reasoning: {effort}`                            |
 * | `delta-eta-4.6-<effort>-fast`        | `eta-4.6`        | `reasoning: {effort}`, `service_tier: "priority"` |
 */
import type { ModelEntry } from "../../catalog/models.ts";
import type { UpstreamModel } from "../policy.ts";

const UPSTREAM_NAME = { gamma: "gamma-2.5", eta: "eta-4.6" } as const;

export function deltaUpstreamModel(model: ModelEntry): UpstreamModel {
  const fields: Record<string, unknown> = {};
  if (model.effort) fields.reasoning = { effort: model.effort };
  if (model.fast) fields.service_tier = "priority";
  const name = model.family === "eta" ? UPSTREAM_NAME.eta : UPSTREAM_NAME.gamma;
  return Object.keys(fields).length > 0 ? { model: name, fields } : { model: name };
}
