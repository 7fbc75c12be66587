/** Request bodies of an exact input estimate (the gateway's, spec §8.1 p.2), for tests at a token limit. */
import assert from "node:assert/strict";
import { estimateInputTokens } from "../../src/billing/estimate.ts";

/** A Chat or Messages body whose input estimate is exactly `tokens`: `text`, then padding. */
export function bodyOfEstimate(
  model: string,
  tokens: number,
  extra: Record<string, unknown> = {},
  text = "",
) {
  const make = (n: number) => ({
    model,
    ...extra,
    messages: [{ role: "user", content: text + "а".repeat(n) }],
  });
  const base = estimateInputTokens(make(0));
  let n = Math.max(0, 3 * (tokens - base));
  while (estimateInputTokens(make(n)) < tokens) n++;
  while (n > 0 && estimateInputTokens(make(n)) > tokens) n--;
  const body = make(n);
  assert.equal(estimateInputTokens(body), tokens);
  return body;
}
