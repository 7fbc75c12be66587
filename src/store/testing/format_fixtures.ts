/** What a store format test writes before a migration and finds intact after it (kv_format_test.ts,
 *  pg_format_test.ts): a key with money and a usage row, counted in its hour. */
import assert from "node:assert/strict";
import type { Store } from "../store.ts";
import { batchId, keyRecord, usageRow } from "./test_fixtures.ts";

const HOUR = 3_600_000;
const AT = Date.UTC(2026, 2, 1, 10, 5);
const ROW = usageRow("req_format", "key_format", {
  createdAt: AT,
  charged: 7n,
  inputTokens: 3,
  outputTokens: 4,
});

export async function writeSample(store: Store): Promise<void> {
  await store.createKey(keyRecord("key_format", { credited: 5_000n, balance: 5_000n }));
  await store.commit({
    id: batchId(),
    money: [{ keyId: "key_format", spent: 7n, credited: 0n }],
    usage: [ROW],
  });
}

export async function assertSample(store: Store): Promise<void> {
  const key = await store.getKey("key_format");
  assert.deepEqual([key?.credited, key?.spent, key?.balance], [5_000n, 7n, 4_993n]);
  assert.deepEqual((await store.listUsage("key_format", { limit: 10 })).rows, [ROW]);
  const hour = AT - AT % HOUR;
  assert.deepEqual(await store.usageHours("key_format", hour, hour + HOUR), [
    {
      hour,
      family: "alpha",
      model: "k3",
      requests: 1,
      charged: 7n,
      inputTokens: 3,
      cachedInputTokens: 0,
      outputTokens: 4,
    },
  ]);
}
