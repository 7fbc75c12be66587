import assert from "node:assert/strict";
import { Accounts } from "../accounts/accounts.ts";
import { type ModelEntry, MODELS } from "../catalog/models.ts";
import { emptyUsage, type IRUsage } from "../ir/usage.ts";
import { KvStore } from "../store/kv_store.ts";
import type { UsageRow } from "../store/types.ts";
import type { CapCodes } from "../accounts/caps.ts";
import { type Reservation, reserve } from "./ledger.ts";
import type { Rates, Tariff } from "./tariff.ts";
import { Logger } from "../util/log.ts";

/** 1 USD / 1M input tokens, 2 USD / 1M output tokens, in pico-USD per token. */
const RATES: Rates = {
  input: 1_000_000n,
  cacheRead: 100_000n,
  output: 2_000_000n,
  search: 0n,
  searchPer: "none",
  memberDiscount: false,
};
const tariff = { rates: () => RATES } as unknown as Tariff;
// Any catalog model: the rates above are what the test prices with.
const MODEL: ModelEntry = {
  ...MODELS[0]!,
  contextWindow: 100_000,
  maxOutputTokens: 1_000,
  images: false,
};
const CAPS: CapCodes = {
  hourly_reserve_limit: "hourly_reserve_limit",
  daily_reserve_limit: "daily_reserve_limit",
  hourly_spend_limit: "hourly_spend_limit",
  daily_spend_limit: "daily_spend_limit",
};
/** Reserve of every test request: 100 input × 1e6 + 50 output × 2e6 pico-USD. */
const HOLD = 200_000_000n;
const usage = (input: number, output: number): IRUsage => ({
  ...emptyUsage(),
  inputTokens: input,
  outputTokens: output,
});

async function setup(balance: bigint, priced: Tariff = tariff) {
  const store = await KvStore.open(":memory:");
  /** The log lines the reservations (and the ledger) wrote. */
  const lines: string[] = [];
  const log = new Logger("info", (line) => lines.push(line));
  const accounts = await Accounts.load(store, log, 1);
  const { account } = await accounts.create({ balance });
  let n = 0;
  const hold = (acc = account): Promise<Reservation> =>
    reserve(accounts.ledger, priced, {
      account: acc,
      capCodes: CAPS,
      model: MODEL,
      inputTokens: 100,
      outputBudget: 50,
      requestId: `req_${++n}`,
      endpoint: "/v1/chat/completions",
      stream: true,
    }, () =>
      Date.now(), log);
  const identity = (acc = account) => {
    // The API's balance is what is available: the settled balance minus open holds.
    const available = accounts.available(acc);
    assert.equal(acc.rec.credited, available + acc.held + acc.rec.spent, "credited = balance + held + spent");
    assert.ok(acc.rec.balance >= 0n, "balance never below zero");
    assert.ok(available >= 0n, "open holds stay covered");
  };
  const close = async () => {
    await accounts.close();
    store.close();
  };
  return { store, accounts, account, hold, identity, close, lines };
}

Deno.test("Reservation.settle charges once; later calls are no-ops", async () => {
  const t = await setup(1_000_000_000n);
  const r = await t.hold();
  assert.equal(r.amount, HOLD);
  assert.equal(t.account.held, HOLD);
  t.identity();
  assert.equal(r.settle({ usage: usage(100, 10), usageSource: "upstream", status: "ok" }), 120_000_000n);
  assert.equal(r.settle({ usage: usage(100, 50), usageSource: "upstream", status: "ok" }), 0n);
  assert.equal(t.account.held, 0n);
  assert.equal(t.account.rec.balance, 880_000_000n);
  assert.equal(t.account.rec.spent, 120_000_000n);
  t.identity();
  await t.accounts.committer.flush();
  const page = await t.store.listUsage(t.account.rec.id, { limit: 10 });
  assert.equal(page.rows.length, 1);
  assert.equal(page.rows[0]!.charged, 120_000_000n);
  assert.equal(page.rows[0]!.reserved, HOLD);
  assert.equal(page.rows[0]!.writtenOff, 0n);
  assert.equal((await t.store.getKey(t.account.rec.id))!.balance, 880_000_000n);
  await t.close();
});

Deno.test("Reservation.settle caps upstream usage beyond the hold at the hold plus the free balance", async () => {
  const t = await setup(1_000_000_000n);
  const r = await t.hold();
  // 5,000 output tokens priced 10,000e6 + 100e6: far beyond the hold and the balance.
  const charged = r.settle({ usage: usage(100, 5_000), usageSource: "upstream", status: "ok" });
  assert.equal(charged, 1_000_000_000n, "hold + the credit no other hold covers = the whole balance");
  assert.equal(t.account.rec.balance, 0n);
  t.identity();
  await t.accounts.committer.flush();
  const row = (await t.store.listUsage(t.account.rec.id, { limit: 1 })).rows[0]!;
  assert.equal(row.charged, 1_000_000_000n);
  assert.equal(row.writtenOff, 10_100_000_000n - 1_000_000_000n);
  const logged = t.lines.map((l) => JSON.parse(l));
  assert.deepEqual(logged.map(({ ts: _, ...rest }) => rest), [{
    level: "warn",
    msg: "usage beyond the hold written off",
    request_id: row.requestId,
    key_id: t.account.rec.id,
    written_off_pusd: String(row.writtenOff),
  }]);
  await t.close();
});

Deno.test("Reservation.settle beyond the hold leaves the key's other open holds covered", async () => {
  const t = await setup(1_000_000_000n);
  const other = await t.accounts.create({ balance: 500_000_000n });
  const otherHold = await t.hold(other.account);
  const first = await t.hold();
  const second = await t.hold();
  assert.equal(
    first.settle({ usage: usage(100, 5_000), usageSource: "upstream", status: "ok" }),
    800_000_000n,
  );
  assert.equal(t.account.rec.balance, HOLD, "what is left covers the second hold exactly");
  assert.equal(t.accounts.available(t.account), 0n);
  t.identity();
  assert.equal(second.settle({ usage: usage(100, 5_000), usageSource: "upstream", status: "ok" }), HOLD);
  assert.equal(t.account.rec.balance, 0n);
  t.identity();
  assert.equal(other.account.rec.balance, 500_000_000n, "another key's balance is untouched");
  assert.equal(other.account.held, HOLD);
  otherHold.settle({ usage: usage(0, 0), usageSource: "upstream", status: "ok" });
  t.identity(other.account);
  await t.close();
});

Deno.test("Reservation.settle caps an estimated charge at the hold even when credit is free", async () => {
  const t = await setup(10_000_000_000n);
  const r = await t.hold();
  const charged = r.settle({ usage: usage(100, 1_000), usageSource: "estimated", status: "cancelled" });
  assert.equal(charged, HOLD);
  t.identity();
  await t.accounts.committer.flush();
  const row = (await t.store.listUsage(t.account.rec.id, { limit: 1 })).rows[0]!;
  assert.equal(row.usageSource, "estimated");
  assert.equal(row.writtenOff, 2_100_000_000n - HOLD);
  await t.close();
});

Deno.test("Reservation.settle prices the whole request at the row of its actual input, not the estimate's", async () => {
  // Above 100 input tokens the second row: 3 USD / 1M input, 5 USD / 1M output (theta's plus tiers, spec §8.1).
  const above: Rates = { ...RATES, input: 3_000_000n, output: 5_000_000n };
  const tiered = { rates: (_m: string, n: number) => n > 100 ? above : RATES } as unknown as Tariff;
  const t = await setup(10_000_000_000n, tiered);
  const at = await t.hold(); // estimated input 100: the first row
  assert.equal(at.amount, HOLD);
  assert.equal(at.settle({ usage: usage(100, 10), usageSource: "upstream", status: "ok" }), 120_000_000n);
  const over = await t.hold();
  assert.equal(over.settle({ usage: usage(101, 10), usageSource: "upstream", status: "ok" }), 353_000_000n);
  t.identity();
  await t.accounts.committer.flush();
  const rows = (await t.store.listUsage(t.account.rec.id, { limit: 2 })).rows;
  const rates = rows.map((r) => [r.inputTokens, r.rates.input, r.rates.output]).sort((a, b) =>
    Number(a[0]) - Number(b[0])
  );
  assert.deepEqual(
    rates,
    [[100, 1_000_000n, 2_000_000n], [101, 3_000_000n, 5_000_000n]],
    "each row records its rates",
  );
  await t.close();
});

Deno.test("Reservation.whenSettled hooks run once, with the settled row", async () => {
  const t = await setup(1_000_000_000n);
  const r = await t.hold();
  const seen: UsageRow[] = [];
  r.whenSettled((row) => seen.push(row));
  r.whenSettled((row) => seen.push(row));
  r.settle({ usage: usage(10, 0), usageSource: "upstream", status: "ok" });
  r.settle({ usage: usage(10, 0), usageSource: "upstream", status: "ok" });
  assert.equal(seen.length, 2, "each hook once");
  assert.equal(seen[0]!.charged, 10_000_000n);
  assert.equal(seen[0]!.requestId, r.input.requestId);
  await t.close();
});

Deno.test("Reservation.trackOpen writes the cut-now row as a checkpoint while draining, deleted on settle", async () => {
  const t = await setup(10_000_000_000n);
  const r = await t.hold();
  const free = await t.hold();
  r.trackOpen(() => ({ usage: usage(100, 1_000), usageSource: "estimated", status: "cancelled" }));
  free.trackOpen(() => undefined); // nothing decoded yet: no checkpoint
  await t.accounts.drain();
  await new Promise((res) => setTimeout(res, 250));
  const open = await t.store.listOpen();
  assert.equal(open.length, 1);
  assert.equal(open[0]!.requestId, r.input.requestId);
  assert.equal(open[0]!.charged, HOLD, "an estimate capped at the hold");
  assert.equal(open[0]!.status, "cancelled");
  assert.equal(t.account.rec.balance, 10_000_000_000n, "a checkpoint charges nothing");
  r.settle({ usage: usage(100, 10), usageSource: "upstream", status: "ok" });
  free.settle({ usage: usage(0, 0), usageSource: "upstream", status: "ok" });
  await t.accounts.committer.flush();
  assert.deepEqual(await t.store.listOpen(), []);
  await t.close();
});
