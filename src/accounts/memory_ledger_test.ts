import assert from "node:assert/strict";
import { GatewayError } from "../errors/gateway_error.ts";
import { KvStore } from "../store/kv_store.ts";
import type { UsageRow } from "../store/types.ts";
import { Accounts } from "./accounts.ts";
import type { CapCodes } from "./caps.ts";
import { MemoryLedger } from "./memory_ledger.ts";
import { DAY, HOUR } from "./windows.ts";
import { Logger } from "../util/log.ts";

const nextHour = () => Date.now() - (Date.now() % HOUR) + HOUR;
const nextDay = () => Date.now() - (Date.now() % DAY) + DAY;

/** Codes of the delta dialect, so the test sees the ledger use the codes it is given. */
const DELTA: CapCodes = {
  hourly_reserve_limit: "delta_hourly_reserve_limit",
  daily_reserve_limit: "delta_daily_reserve_limit",
  hourly_spend_limit: "delta_hourly_spend_limit",
  daily_spend_limit: "delta_daily_spend_limit",
};

function row(requestId: string, keyId: string, charged: bigint, createdAt: number): UsageRow {
  return {
    requestId,
    keyId,
    family: "gamma",
    model: "m",
    endpoint: "/v1/responses",
    stream: false,
    status: "ok",
    createdAt,
    inputTokens: 1,
    cachedInputTokens: 0,
    outputTokens: 1,
    webSearchRequests: 0,
    reserved: 0n,
    charged,
    writtenOff: 0n,
    usageSource: "upstream",
    rates: { input: 1n, cacheRead: 1n, output: 1n, search: 0n },
  };
}

async function setup(balance: bigint) {
  const store = await KvStore.open(":memory:");
  const accounts = await Accounts.load(store, new Logger("error", () => {}), 1);
  const { account } = await accounts.create({ balance });
  const ledger = accounts.ledger;
  assert.ok(ledger instanceof MemoryLedger, "the default ledger is the in-memory one");
  const identity = () =>
    assert.equal(account.rec.credited, ledger.available(account) + account.held + account.rec.spent);
  return {
    store,
    ledger,
    account,
    identity,
    close: async () => {
      await accounts.close();
      store.close();
    },
  };
}

/** The code a refused hold rejects with. */
async function refusal(p: Promise<void>): Promise<string> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    return err.code;
  }
  return "placed";
}

Deno.test("MemoryLedger.hold: zero credit, credit below the reserve, then the hold", async () => {
  const t = await setup(100n);
  const now = Date.now();
  assert.equal(
    await refusal(t.ledger.hold(t.account, { amount: 101n, capCodes: DELTA, now })),
    "request_reserve_exceeds_credit",
  );
  assert.equal(await refusal(t.ledger.hold(t.account, { amount: 100n, capCodes: DELTA, now })), "placed");
  assert.equal(
    await refusal(t.ledger.hold(t.account, { amount: 1n, capCodes: DELTA, now })),
    "insufficient_credit",
  );
  assert.equal(t.account.held, 100n);
  t.identity();
  await t.close();
});

Deno.test("MemoryLedger.hold checks the caps with the given codes, in the documented order", async () => {
  const t = await setup(1_000_000n);
  const now = nextHour() + 30 * 60_000; // windows roll forward only: a time after the account's creation
  t.account.rec.caps = { hourlySpend: 500n, dailySpend: 800n, hourlyReserve: 600n, dailyReserve: 700n };
  await t.ledger.hold(t.account, { amount: 400n, capCodes: DELTA, now });
  // 400 reserved and open: 201 more crosses the hourly reserve cap (600) first.
  const err = await t.ledger.hold(t.account, { amount: 201n, capCodes: DELTA, now }).catch((e) => e);
  assert.ok(err instanceof GatewayError);
  assert.equal(err.code, "delta_hourly_reserve_limit");
  assert.equal(err.retryAfter, 30 * 60, "seconds to the end of the clock hour");
  // 101 fits the reserve caps but not the hourly spend cap (400 open + 101 > 500).
  assert.equal(
    await refusal(t.ledger.hold(t.account, { amount: 101n, capCodes: DELTA, now })),
    "delta_hourly_spend_limit",
  );
  assert.equal(t.account.held, 400n, "refused holds change nothing");
  const w = t.ledger.windows(t.account, now);
  assert.deepEqual([w.hourReserved, w.open], [400n, 400n]);
  t.identity();
  await t.close();
});

Deno.test("MemoryLedger.settle charges and releases; a zero charge is a release", async () => {
  const t = await setup(1_000n);
  const now = Date.now();
  await t.ledger.hold(t.account, { amount: 300n, capCodes: DELTA, now });
  await t.ledger.hold(t.account, { amount: 200n, capCodes: DELTA, now });
  t.ledger.settle(t.account, 300n, 120n, row("req_1", t.account.rec.id, 120n, now));
  t.ledger.settle(t.account, 200n, 0n, row("req_2", t.account.rec.id, 0n, now));
  assert.deepEqual([t.account.held, t.account.rec.balance, t.account.rec.spent], [0n, 880n, 120n]);
  assert.equal(t.ledger.available(t.account), 880n);
  const w = t.ledger.windows(t.account, now);
  assert.deepEqual([w.open, w.hourSpent, w.daySpent, w.hourReserved, w.dayReserved], [
    0n,
    120n,
    120n,
    500n,
    500n,
  ]);
  t.identity();
  await t.ledger.flush();
  const stored = (await t.store.getKey(t.account.rec.id))!;
  assert.deepEqual([stored.balance, stored.spent, stored.credited], [880n, 120n, 1_000n]);
  assert.equal(
    (await t.store.listUsage(t.account.rec.id, { limit: 5 })).rows.length,
    2,
    "the release has its row",
  );
  await t.close();
});

Deno.test("MemoryLedger.windows roll over at the hour and the UTC day", async () => {
  const t = await setup(1_000n);
  const start = nextDay() + DAY - 60_000; // 23:59 UTC of a day after the account's creation
  await t.ledger.hold(t.account, { amount: 100n, capCodes: DELTA, now: start });
  t.ledger.settle(t.account, 100n, 40n, row("req_1", t.account.rec.id, 40n, start));
  let w = t.ledger.windows(t.account, start + 1);
  assert.deepEqual([w.hourSpent, w.daySpent, w.hourReserved, w.dayReserved], [40n, 40n, 100n, 100n]);
  w = t.ledger.windows(t.account, start + HOUR);
  assert.deepEqual([w.hourSpent, w.daySpent, w.hourReserved, w.dayReserved, w.open], [0n, 0n, 0n, 0n, 0n]);
  await t.close();
});
