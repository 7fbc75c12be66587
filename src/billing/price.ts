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

export function reserveAmount(
  rates: Rates,
  inputTokens: number,
  outputBudget: number,
  member: boolean,
): bigint {
  const raw = BigInt(inputTokens) * rates.input + BigInt(outputBudget) * rates.output;
  return discounted(raw, rates, member);
}

/** spec §8.1 p.1, p.4, p.6: cache reads leave ordinary input; a search fee per search, or once per request that searched. */
export function chargeAmount(rates: Rates, usage: IRUsage, member: boolean): bigint {
  const cached = BigInt(Math.min(usage.cachedInputTokens, usage.inputTokens));
  const ordinary = BigInt(usage.inputTokens) - cached;
  let amount = ordinary * rates.input + cached * rates.cacheRead + BigInt(usage.outputTokens) * rates.output;
  amount = discounted(amount, rates, member);
  if (usage.webSearchRequests > 0) {
    if (rates.searchPer === "search") amount += BigInt(usage.webSearchRequests) * rates.search;
    else if (rates.searchPer === "request") amount += rates.search;
  }
  return amount;
}
