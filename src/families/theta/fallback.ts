/**
 * Theta's fallback order (spec §4.7, docs/families/theta.md): when the requested model's limit is exhausted
 * on the account serving the request, the nearest theta model that accepts the request answers instead.
 * Nearness is the distance in this ranking (strongest first); between two equally near, the stronger one.
 * "Accepts": the model takes the request's images, its input, and its output budget (catalog limits).
 */
import { findModel, type ModelEntry } from "../../catalog/models.ts";

export const THETA_RANKING = [
  "theta3.8-max",
  "theta3.7-max",
  "theta3.7-plus",
  "theta3.6-plus",
  "theta3.5-plus",
  "theta3.8-omni-flash",
  "theta3.5-omni-plus",
] as const;

/** What a request needs of the model that serves it. */
export interface RequestNeeds {
  images: boolean;
  inputTokens: number;
  outputBudget: number;
}

/** The other theta models in the order they are tried for `requested`. */
export function fallbackOrder(requested: string): string[] {
  const at = THETA_RANKING.indexOf(requested as typeof THETA_RANKING[number]);
  if (at < 0) return [];
  return THETA_RANKING
    .map((id, i) => ({ id, distance: Math.abs(i - at), i }))
    .filter((m) => m.id !== requested)
    .sort((a, b) => a.distance - b.distance || a.i - b.i)
    .map((m) => m.id);
}

export function accepts(model: ModelEntry, needs: RequestNeeds): boolean {
  const inputLimit = model.maxInputTokens ?? model.contextWindow;
  return (model.images || !needs.images) &&
    needs.inputTokens <= inputLimit &&
    needs.inputTokens + needs.outputBudget <= model.contextWindow &&
    needs.outputBudget <= model.maxOutputTokens;
}

/** The first model after `requested` in its order that accepts the request and is not in `unavailable`. */
export function nextModel(
  requested: string,
  needs: RequestNeeds,
  unavailable: ReadonlySet<string>,
): string | undefined {
  return fallbackOrder(requested).find((id) => {
    const m = findModel(id);
    return m !== undefined && !unavailable.has(id) && accepts(m, needs);
  });
}
