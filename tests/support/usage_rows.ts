/** The usage report's rows as a key holder reads them, and what a row's tokens cost at its own rates. */
import assert from "node:assert/strict";
import { parseUsd } from "../../src/money/usd.ts";
import type { TestGateway } from "./harness.ts";

/** The newest `limit` rows of the key (`GET /v1/usage/requests`). */
export async function usageRows(t: TestGateway, key: string, limit = 100): Promise<Record<string, any>[]> {
  const res = await fetch(`${t.url}/v1/usage/requests?limit=${limit}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  return (await res.json()).data;
}

/** Every row of a key through /v1/usage/requests on the gateway at `url`, following the cursor `limit` rows at a
 *  time, newest first. */
export async function walkUsage(url: string, key: string, limit: number): Promise<Record<string, any>[]> {
  const rows: Record<string, any>[] = [];
  let cursor: string | null = null;
  do {
    const q: string = cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`;
    const res = await fetch(`${url}/v1/usage/requests?limit=${limit}${q}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const page = await res.json();
    assert.equal(res.status, 200, JSON.stringify(page));
    assert.ok(page.data.length <= limit);
    rows.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor !== null);
  return rows;
}

/** What a row's tokens cost at its own rates (pico-USD), without the search fee. */
export function tokenCost(row: Record<string, any>): bigint {
  const perToken = (usdPerMillion: string) => parseUsd(usdPerMillion) / 1_000_000n;
  const cached = BigInt(row.cached_input_tokens);
  return (BigInt(row.input_tokens) - cached) * perToken(row.rates_usd_per_million.input) +
    cached * perToken(row.rates_usd_per_million.cache_read) +
    BigInt(row.output_tokens) * perToken(row.rates_usd_per_million.output);
}
