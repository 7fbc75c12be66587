/**
 * A debit (a shop refund, Ledger.debit) and a credit already in the store (Ledger.applyCredit) on both ledgers:
 * the store's atomic step is the truth and the in-memory view follows it with no second delta; the in-memory
 * ledger refuses a debit its open holds would not leave room for and keeps the amount from new holds while the
 * step runs; the leasing ledger gives its unused lease back before the step, so the store's check sees it.
 */
import assert from "node:assert/strict";
import { GatewayError } from "../errors/gateway_error.ts";
import { KvStore } from "../store/kv_store.ts";
import { keyRecord } from "../store/testing/test_fixtures.ts";
import { newAccount } from "./account.ts";
import type { CapCodes } from "./caps.ts";
import { LeaseLedger } from "./lease_ledger.ts";
import type { DebitOutcome } from "./ledger.ts";
import { MemoryLedger } from "./memory_ledger.ts";
import { Logger } from "../util/log.ts";

const QUIET = new Logger("error", () => {});

const CODES: CapCodes = {
  hourly_reserve_limit: "hourly_reserve_limit",
  daily_reserve_limit: "daily_reserve_limit",
  hourly_spend_limit: "hourly_spend_limit",
  daily_spend_limit: "daily_spend_limit",
};

const identity = (acc: ReturnType<typeof newAccount>, available: bigint) =>
  assert.equal(acc.rec.credited, available + acc.held + acc.rec.spent);

Deno.test("MemoryLedger.debit: refused while open holds leave too little; the amount is kept from holds while the step runs", async () => {
  const store = await KvStore.open(":memory:");
  const rec = keyRecord("key_a", { credited: 100n, balance: 100n });
  await store.createKey(rec);
  const ledger = new MemoryLedger(store, QUIET, 1);
  const acc = newAccount({ ...rec });
  try {
    await ledger.hold(acc, { amount: 60n, capCodes: CODES, now: Date.now() });
    let called = 0;
    const write = (outcome: DebitOutcome) => () => (called++, Promise.resolve(outcome));
    assert.equal(await ledger.debit(acc, 50n, write("debited")), "insufficient");
    assert.equal(called, 0, "the store step is not called");
    assert.equal(acc.rec.balance, 100n);

    let release!: () => void;
    const running = ledger.debit(acc, 40n, () => new Promise((r) => release = () => r("debited")));
    // While the step runs the 40 are held back: a new hold finds nothing free.
    await assert.rejects(
      ledger.hold(acc, { amount: 1n, capCodes: CODES, now: Date.now() }),
      (e: GatewayError) => e.code === "insufficient_credit",
    );
    identity(acc, ledger.available(acc));
    release();
    assert.equal(await running, "debited");
    assert.deepEqual([acc.rec.balance, acc.rec.credited, acc.held], [60n, 60n, 60n]);
    identity(acc, ledger.available(acc));

    // A step that wrote nothing changes nothing here either.
    assert.equal(await ledger.debit(acc, 0n, write("unchanged")), "unchanged");
    assert.deepEqual([acc.rec.balance, acc.rec.credited, acc.held], [60n, 60n, 60n]);
    ledger.applyCredit(acc, 15n);
    assert.deepEqual([acc.rec.balance, acc.rec.credited], [75n, 75n]);
    await ledger.flush();
    assert.equal((await store.getKey("key_a"))!.credited, 100n, "no delta of its own reaches the store");
  } finally {
    await ledger.close();
    await store.close();
  }
});

Deno.test("LeaseLedger.debit: its unused lease goes back before the store step; the view follows the step", async () => {
  const store = await KvStore.open(":memory:");
  const rec = keyRecord("key_a", { credited: 1_000n, balance: 1_000n });
  await store.createKey(rec);
  const ledger = new LeaseLedger(store, {
    holder: "h1",
    ttlMs: 30_000,
    idleMs: 60_000,
    commitIntervalMs: 1,
    log: QUIET,
  });
  const acc = newAccount({ ...rec });
  try {
    await ledger.hold(acc, { amount: 100n, capCodes: CODES, now: Date.now() });
    const leased = (await store.leaseView("key_a", "h1", Date.now()))!.mine;
    assert.ok(leased >= 100n, `a slice taken: ${leased}`);
    let seen: bigint | undefined;
    const outcome = await ledger.debit(acc, 500n, async () => {
      seen = (await store.leaseView("key_a", "h1", Date.now()))!.mine;
      return "debited";
    });
    assert.equal(outcome, "debited");
    assert.equal(seen, 100n, "only the open hold's part of the lease is left when the step runs");
    assert.deepEqual([acc.rec.balance, acc.rec.credited], [500n, 500n]);
    assert.equal(ledger.available(acc), 400n, "500 − the hold of 100");
  } finally {
    await ledger.close();
    await store.close();
  }
});
