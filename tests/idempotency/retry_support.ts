/** What the retry tests of tests/idempotency/ check after a keyed request: upstream calls, the charge, the row. */
import assert from "node:assert/strict";
import { POOL_DOCUMENT, type PoolDoc } from "../../src/families/theta/pool_state.ts";
import { formatUsd, parseUsd } from "../../src/money/usd.ts";
import { sleep } from "../support/gateway_process.ts";
import type { TestGateway } from "../support/harness.ts";
import { walkUsage } from "../support/usage_rows.ts";

export async function balance(t: TestGateway, id: string): Promise<string> {
  const { status, json } = await t.admin("GET", `/admin/keys/${id}`);
  assert.equal(status, 200, JSON.stringify(json));
  return json.balance_usd;
}

/** The calls the simulator received whose body holds `marker` (a text unique to one test case). */
export function upstreamCalls(t: TestGateway, marker: string) {
  return t.sim.requests.filter((r) => JSON.stringify(r.body).includes(marker));
}

/** Waits (at most 10 s) until no keyed run is left in the gateway: every answer stored, every run settled. */
export async function runsEnded(t: TestGateway): Promise<void> {
  for (let waited = 0; t.gw.app.keyedRuns.size > 0; waited += 10) {
    assert.ok(waited < 10_000, `${t.gw.app.keyedRuns.size} keyed runs still going after 10 s`);
    await sleep(10);
  }
}

/**
 * The key made exactly one usage row, the first request's (`requestId`), and its balance moved from `before`
 * by exactly that row's charge; returns the row.
 */
export async function chargedOnce(
  t: TestGateway,
  k: { id: string; key: string },
  before: string,
  requestId: string | null,
): Promise<Record<string, any>> {
  await runsEnded(t);
  const rows = await walkUsage(t.url, k.key, 10);
  assert.equal(rows.length, 1, `one usage row: ${JSON.stringify(rows)}`);
  const row = rows[0]!;
  assert.equal(row.request_id, requestId, "the row is the first request's");
  assert.ok(parseUsd(row.charged_usd) > 0n, `charged ${row.charged_usd}`);
  const after = await balance(t, k.id);
  assert.equal(
    formatUsd(parseUsd(before) - parseUsd(after)),
    row.charged_usd,
    "the balance moved by the row",
  );
  return row;
}

/** Theta's pool document as stored (null before the first theta request). */
export function poolDoc(t: TestGateway): Promise<PoolDoc | null> {
  return t.gw.app.store.updateDocument(
    POOL_DOCUMENT,
    (doc) => ({ doc: null, result: doc as PoolDoc | null }),
  );
}
