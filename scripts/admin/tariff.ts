/** `tariff set`: the edit of one model's base row, expressed as the rows POST /admin/tariff replaces. */
import type { WireRow } from "../../src/billing/tariff_rows.ts";

export interface BaseRates {
  input: string;
  output: string;
  /** Absent: keep the current cache-read rate; null: no cache rate (cache reads charged as input). */
  cacheRead?: string | null;
}

/**
 * Every row of `model` from the current table with its base row's rates replaced (tiers, search fee
 * and member discount kept). A model without rows gets a fresh base row, which the gateway then
 * validates (an unknown model is refused there).
 */
export function withBaseRates(current: readonly WireRow[], model: string, rates: BaseRates): WireRow[] {
  const rows = current.filter((r) => r.model === model).map((r) => ({ ...r }));
  let base = rows.find((r) => r.above_input_tokens === null);
  if (!base) {
    base = {
      model,
      input_usd_per_million: rates.input,
      output_usd_per_million: rates.output,
      cache_read_usd_per_million: null,
      above_input_tokens: null,
      search: null,
      member_discount: false,
    };
    rows.unshift(base);
  }
  base.input_usd_per_million = rates.input;
  base.output_usd_per_million = rates.output;
  if (rates.cacheRead !== undefined) base.cache_read_usd_per_million = rates.cacheRead;
  return rows;
}
