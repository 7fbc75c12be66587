/**
 * The seed of the live tariff, USD per 1,000,000 tokens (spec §8.1). Alpha and theta are the spec's
 * tables. Beta, gamma and eta rates are not given by the spec: these are documented placeholders
 * (fast variants dearer; the eta effort level does not change the price) for operators to replace.
 */
export interface TariffRow {
  model: string;
  /** Applies when the request's input exceeds this many tokens (theta plus tiers), else the base row. */
  aboveInputTokens?: number;
  input: string;
  /** Cache-read rate; absent = no cache (charged as input). */
  cacheRead?: string;
  output: string;
  /** Flat fee per provider-billed web search (beta), or once per request if it searched (theta). */
  search?: { usd: string; per: "search" | "request" };
  /** Private membership discount applies (alpha only, spec §8.1 p.3). */
  memberDiscount?: boolean;
}

const alpha = (model: string, input: string, cacheRead: string, output: string): TariffRow => ({
  model,
  input,
  cacheRead,
  output,
  memberDiscount: true,
});
const beta = (model: string, input: string, cacheRead: string, output: string): TariffRow => ({
  model,
  input,
  cacheRead,
  output,
  search: { usd: "0.01", per: "search" },
});
const theta = (model: string, input: string, output: string, aboveInputTokens?: number): TariffRow => ({
  model,
  input,
  output,
  search: { usd: "0.01", per: "request" },
  ...(aboveInputTokens === undefined ? {} : { aboveInputTokens }),
});
const eta = (fast: boolean) =>
  (["low", "medium", "high", "xhigh"] as const).map((e): TariffRow => ({
    model: `delta-eta-4.6-${e}${fast ? "-fast" : ""}`,
    input: fast ? "4.00" : "2.00",
    cacheRead: fast ? "0.40" : "0.20",
    output: fast ? "16.00" : "8.00",
  }));

export const TARIFF_SEED: readonly TariffRow[] = [
  alpha("k3", "3.00", "0.30", "15.00"),
  alpha("k3-256k", "3.00", "0.30", "15.00"),
  alpha("alpha-for-coding", "0.95", "0.19", "4.00"),
  alpha("alpha-for-coding-highspeed", "1.90", "0.38", "8.00"),
  beta("beta-opus-5", "15.00", "1.50", "75.00"),
  beta("beta-sonnet-5", "3.00", "0.30", "15.00"),
  beta("beta-haiku-4-5", "1.00", "0.10", "5.00"),
  beta("beta-fable-5", "3.00", "0.30", "15.00"),
  beta("beta-fable-5-1", "3.00", "0.30", "15.00"),
  { model: "gamma-2.5", input: "1.25", cacheRead: "0.125", output: "10.00" },
  { model: "gamma-2.5-fast", input: "2.50", cacheRead: "0.25", output: "20.00" },
  ...eta(false),
  ...eta(true),
  theta("theta3.8-max", "2.00", "6.00"),
  theta("theta3.7-max", "2.50", "7.50"),
  theta("theta3.7-plus", "0.40", "1.60"),
  theta("theta3.7-plus", "1.20", "4.80", 256_000),
  theta("theta3.6-plus", "0.50", "3.00"),
  theta("theta3.6-plus", "2.00", "6.00", 256_000),
  theta("theta3.5-plus", "0.40", "2.40"),
  theta("theta3.5-plus", "0.50", "3.00", 256_000),
  theta("theta3.5-omni-plus", "1.40", "8.30"),
  theta("theta3.8-omni-flash", "0.15", "0.47"),
];
