/** Pure price arithmetic of spec §8.1: reserve before the call, charge after it. All pico-USD bigints. */
import type { IRUsage } from "../ir/usage.ts";
import { ceilDiv } from "../money/usd.ts";
import type { Rates } from "./tariff.ts";

/** spec §8.1 p.2: output part of the reserve when the request gives no output budget. */
export const DEFAULT_RESERVE_OUTPUT_TOKENS = 32_000;

/** spec §8.1 p.3: private membership pays 75% on discounted families; rounds up to the smallest unit. */
function discounted(amount: bigint, rates: Rates, member: boolean): bigint {
  return member && rates.memberDiscount ? ceilDiv(amount * 3n, 4n) : amount;
}

/**
 * The reserve; `searches` is how many provider-billed searches the request may make (beta: its web search
 * tool's max_uses), so their fee is held too.
 */
export function reserveAmount(
  rates: Rates,
  inputTokens: number,
  outputBudget: number,
  member: boolean,
  searches = 0,
): bigint {
  const raw = BigInt(inputTokens) * rates.input + BigInt(outputBudget) * rates.output;
  return discounted(raw, rates, member) + searchFee(rates, searches);
}

/** spec §8.1 p.6 and the theta rule: a fee per search, or once per request that searched; never discounted. */
export function searchFee(rates: Rates, searches: number): bigint {
  if (searches <= 0) return 0n;
  if (rates.searchPer === "search") return BigInt(searches) * rates.search;
  return rates.searchPer === "request" ? rates.search : 0n;
}

/** spec §8.1 p.1, p.4, p.6: cache reads leave ordinary input; plus the search fee. */
export function chargeAmount(rates: Rates, usage: IRUsage, member: boolean): bigint {
  const cached = BigInt(Math.min(usage.cachedInputTokens, usage.inputTokens));
  const ordinary = BigInt(usage.inputTokens) - cached;
  const amount = ordinary * rates.input + cached * rates.cacheRead +
    BigInt(usage.outputTokens) * rates.output;
  return discounted(amount, rates, member) + searchFee(rates, usage.webSearchRequests);
}
