/** The live tariff in memory: model → rate rows, pico-USD per token. Replaced whole when operators change it. */
import { parseUsd } from "../money/usd.ts";
import type { TariffRow } from "../catalog/tariff_seed.ts";

export interface Rates {
  /** pico-USD per token */
  input: bigint;
  cacheRead: bigint;
  output: bigint;
  /** pico-USD per search (or per searching request) */
  search: bigint;
  searchPer: "search" | "request" | "none";
  memberDiscount: boolean;
}

/** USD per 1M tokens → pico-USD per token (exact: 1 USD/1M = 1e6 pico/token). */
const perToken = (usdPerMillion: string) => parseUsd(usdPerMillion) / 1_000_000n;

interface Compiled {
  above: number;
  rates: Rates;
}

export class Tariff {
  readonly #byModel = new Map<string, Compiled[]>();

  constructor(rows: readonly TariffRow[]) {
    for (const r of rows) {
      if (parseUsd(r.input) % 1_000_000n !== 0n || parseUsd(r.output) % 1_000_000n !== 0n) {
        throw new RangeError(`tariff for ${r.model} has more than 6 decimals per 1M tokens`);
      }
      const input = perToken(r.input);
      const rates: Rates = {
        input,
        cacheRead: r.cacheRead === undefined ? input : perToken(r.cacheRead),
        output: perToken(r.output),
        search: r.search ? parseUsd(r.search.usd) : 0n,
        searchPer: r.search?.per ?? "none",
        memberDiscount: r.memberDiscount === true,
      };
      const list = this.#byModel.get(r.model) ?? [];
      list.push({ above: r.aboveInputTokens ?? -1, rates });
      list.sort((a, b) => b.above - a.above);
      this.#byModel.set(r.model, list);
    }
  }

  /** Rates for a request with this many input tokens (the tier then applies to input and output, spec §8.1). */
  rates(model: string, inputTokens: number): Rates | undefined {
    return this.#byModel.get(model)?.find((c) => inputTokens > c.above)?.rates;
  }
}
