/**
 * The leasing ledger (lease_ledger.ts) over a real store shared by two ledgers — two "processes" — on one
 * in-memory Deno KV: steady-state holds without a store call, settlement moving credit lease → spent, the
 * money property under concurrency, idle give-back, a dead holder's expiry, caps across both, and the codes.
 */
import assert from "node:assert/strict";
import { GatewayError } from "../errors/gateway_error.ts";
import { KvStore } from "../store/kv_store.ts";
import type { Store } from "../store/store.ts";
import { keyRecord, usageRow } from "../store/testing/test_fixtures.ts";
import type { KeyRecord } from "../store/types.ts";
import { type Account, newAccount } from "./account.ts";
import type { CapCodes } from "./caps.ts";
import { LeaseLedger, type LeaseOptions } from "./lease_ledger.ts";
import { Logger } from "../util/log.ts";

const QUIET = new Logger("error", () => {});

const CODES: CapCodes = {
  hourly_reserve_limit: "hourly_reserve_limit",
  daily_reserve_limit: "daily_reserve_limit",
  hourly_spend_limit: "hourly_spend_limit",
  daily_spend_limit: "daily_spend_limit",
};

/** A store whose lease takes are counted. */
function counted(store: Store) {
  const calls = { takes: 0 };
  const proxy = new Proxy(store, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (prop === "takeLease") {
        return (...args: Parameters<Store["takeLease"]>) => (calls.takes++, v.apply(target, args));
      }
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return { store: proxy, calls };
}

async function setup(credit: bigint, over: Partial<KeyRecord> = {}) {
  const store = await KvStore.open(":memory:");
  const rec = keyRecord("key_a", { balance: credit, credited: credit, ...over });
  await store.createKey(rec);
  const ledgers: LeaseLedger[] = [];
  const make = (holder: string, opts: Partial<LeaseOptions> = {}, on: Store = store) => {
    const l = new LeaseLedger(on, {
      holder,
      ttlMs: 30_000,
      idleMs: 60_000,
      commitIntervalMs: 1,
      log: QUIET,
      ...opts,
    });
    ledgers.push(l);
    return { ledger: l, acc: newAccount({ ...rec, caps: { ...rec.caps } }) };
  };
  return {
    store,
    make,
    view: async (holder = "nobody") => (await store.leaseView("key_a", holder, Date.now()))!,
    async close() {
      for (const l of ledgers) await l.close();
      await store.close();
    },
  };
}

let seq = 0;
/** Holds `amount` and settles `charge` of it; returns whether the hold was placed. */
async function spend(ledger: LeaseLedger, acc: Account, amount: bigint, charge: bigint): Promise<boolean> {
  try {
    await ledger.hold(acc, { amount, capCodes: CODES, now: Date.now() });
  } catch (err) {
    if (err instanceof GatewayError) return false;
    throw err;
  }
  await new Promise((r) => setTimeout(r, Math.random() * 3));
  ledger.settle(
    acc,
    amount,
    charge,
    usageRow(`req_${++seq}`, "key_a", { charged: charge, reserved: amount }),
  );
  return true;
}

Deno.test("LeaseLedger: a slice is taken once, then holds come from memory; settlements move lease → spent", async () => {
  const t = await setup(10_000n);
  try {
    const c = counted(t.store);
    const { ledger, acc } = t.make("h_a", {}, c.store);
    for (let i = 0; i < 5; i++) assert.ok(await spend(ledger, acc, 100n, 40n));
    assert.equal(c.calls.takes, 1, "one take for five holds");
    await ledger.flush();
    const v = await t.view("h_a");
    // The slice: eight holds' worth (800), under half of the free 10,000.
    assert.equal(v.spent, 200n);
    assert.equal(v.mine, 800n - 200n);
    assert.equal(v.credited, v.spent + v.leased + (10_000n - 800n));
    assert.equal(ledger.available(acc), 600n + 9_200n);
    assert.equal(ledger.spareCredit(acc), 600n);
    assert.equal(v.window.hourSpent, 200n);
    assert.equal(v.window.hourReserved, 500n);
  } finally {
    await t.close();
  }
});

Deno.test("LeaseLedger: codes — nothing free is insufficient_credit, too little is request_reserve_exceeds_credit", async () => {
  const t = await setup(1_000n);
  try {
    const a = t.make("h_a");
    const b = t.make("h_b");
    await a.ledger.hold(a.acc, { amount: 1_000n, capCodes: CODES, now: Date.now() });
    await assert.rejects(
      b.ledger.hold(b.acc, { amount: 1n, capCodes: CODES, now: Date.now() }),
      (e: GatewayError) => e.code === "insufficient_credit",
    );
    a.ledger.settle(a.acc, 1_000n, 400n, usageRow("req_x", "key_a", { charged: 400n }));
    a.ledger.giveBackIdle(true);
    await a.ledger.flush();
    await assert.rejects(
      b.ledger.hold(b.acc, { amount: 601n, capCodes: CODES, now: Date.now() }),
      (e: GatewayError) => e.code === "request_reserve_exceeds_credit",
    );
    await b.ledger.hold(b.acc, { amount: 600n, capCodes: CODES, now: Date.now() });
    assert.equal((await t.view()).leased, 600n);
  } finally {
    await t.close();
  }
});

Deno.test("LeaseLedger: two holders racing on one key never spend more than its credit; identity exact after close", async () => {
  const credit = 50_000n;
  const t = await setup(credit);
  try {
    const a = t.make("h_a");
    const b = t.make("h_b");
    const jobs: Promise<boolean>[] = [];
    for (let i = 0; i < 400; i++) {
      const side = i % 2 === 0 ? a : b;
      const amount = 200n + BigInt(i % 7) * 50n;
      jobs.push(spend(side.ledger, side.acc, amount, amount - BigInt(i % 3) * 60n));
    }
    const placed = (await Promise.all(jobs)).filter(Boolean).length;
    assert.ok(placed > 100 && placed < 400, `some admitted, some refused: ${placed}`);
    await a.ledger.close();
    await b.ledger.close();
    const v = await t.view();
    assert.equal(v.leased, 0n, "every lease given back");
    assert.equal(v.spent, a.acc.rec.spent - 0n + b.acc.rec.spent, "every settlement committed once");
    assert.ok(v.spent <= credit, `spent ${v.spent} ≤ credit`);
    assert.equal(v.credited, credit);
  } finally {
    await t.close();
  }
});

Deno.test("LeaseLedger: an idle lease goes back by itself", async () => {
  const t = await setup(10_000n);
  try {
    const { ledger, acc } = t.make("h_a", { idleMs: 40 });
    assert.ok(await spend(ledger, acc, 100n, 100n));
    await ledger.flush();
    assert.equal((await t.view("h_a")).mine, 700n);
    await new Promise((r) => setTimeout(r, 150));
    await ledger.flush();
    const v = await t.view("h_a");
    assert.equal(v.mine, 0n);
    assert.equal(v.leased, 0n);
    assert.equal(v.spent, 100n);
  } finally {
    await t.close();
  }
});

Deno.test("LeaseLedger: a dead holder's lease counts until its expiry, then another holder gets the credit", async () => {
  const t = await setup(1_000n);
  try {
    const dead = t.make("h_dead", { ttlMs: 60_000 });
    await dead.ledger.hold(dead.acc, { amount: 1_000n, capCodes: CODES, now: Date.now() });
    // The dead process never settles nor renews; the other one's clock is read past the lease's expiry.
    let skew = 0;
    const live = t.make("h_live", { ttlMs: 60_000, now: () => Date.now() + skew });
    await assert.rejects(
      live.ledger.hold(live.acc, { amount: 10n, capCodes: CODES, now: Date.now() }),
      (e: GatewayError) => e.code === "insufficient_credit",
    );
    skew = 60_001;
    await live.ledger.hold(live.acc, { amount: 10n, capCodes: CODES, now: Date.now() + skew });
    const v = await t.store.leaseView("key_a", "h_live", Date.now() + skew);
    assert.equal(v!.mine > 0n, true);
    assert.equal(v!.leased, v!.mine, "the dead lease no longer counts");
  } finally {
    await t.close();
  }
});

Deno.test("LeaseLedger: a capped key's holds are taken from the store, so its caps hold across holders", async () => {
  const caps = { hourlySpend: null, dailySpend: null, hourlyReserve: 1_000n, dailyReserve: null };
  const t = await setup(100_000n, { caps });
  try {
    const a = t.make("h_a");
    const b = t.make("h_b");
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) => {
        const side = i % 2 ? a : b;
        return side.ledger.hold(side.acc, { amount: 100n, capCodes: CODES, now: Date.now() }).then(
          () => "ok",
          (e: GatewayError) => e.code,
        );
      }),
    );
    assert.equal(results.filter((r) => r === "ok").length, 10);
    assert.deepEqual(new Set(results.filter((r) => r !== "ok")), new Set(["hourly_reserve_limit"]));
    const v = await t.view();
    assert.equal(v.window.hourReserved, 1_000n);
    assert.equal(v.leased, 1_000n, "a capped key's leases are its open holds");
    // Settling returns what a hold did not charge at once (on a holder that placed some of the ten).
    const side = a.acc.held > 0n ? a : b;
    assert.ok(side.acc.held > 0n);
    side.ledger.settle(side.acc, 100n, 30n, usageRow("req_c", "key_a", { charged: 30n }));
    await side.ledger.flush();
    assert.equal((await t.view()).leased, 900n);
  } finally {
    await t.close();
  }
});

const spendCap = (cap: bigint | null) => ({
  hourlySpend: cap,
  dailySpend: null,
  hourlyReserve: null,
  dailyReserve: null,
});

/** Sets `caps` on key_a in the store (another process's admin change) and, when given, in the records of
 *  `aware` holders, as their key refresh would. */
async function setCaps(
  store: Store,
  caps: KeyRecord["caps"],
  ...aware: { ledger: LeaseLedger; acc: Account }[]
): Promise<void> {
  const rec = (await store.getKey("key_a"))!;
  await store.updateKey({ ...rec, caps });
  for (const side of aware) {
    side.acc.rec.caps = { ...caps };
    side.ledger.keyChanged(side.acc);
  }
}

/** Holds and settles `amount` (charged whole, durable before the next) on each side in turn until one is
 *  refused: how many were admitted, and the refusal's code. */
async function untilRefused(sides: { ledger: LeaseLedger; acc: Account }[], amount: bigint) {
  for (let admitted = 0; admitted < 100; admitted++) {
    const { ledger, acc } = sides[admitted % sides.length]!;
    try {
      await ledger.hold(acc, { amount, capCodes: CODES, now: Date.now() });
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err;
      return { admitted, code: err.code };
    }
    ledger.settle(acc, amount, amount, usageRow(`req_${++seq}`, "key_a", { charged: amount }));
    await ledger.flush();
  }
  throw new Error("never refused");
}

Deno.test("LeaseLedger: a cap set on a key another holder leased before counts open holds, not that idle lease", async () => {
  const t = await setup(100_000n);
  try {
    const a = t.make("h_a");
    const b = t.make("h_b");
    assert.ok(await spend(a.ledger, a.acc, 100n, 50n));
    await a.ledger.flush();
    assert.equal((await t.view()).leased, 6_250n - 50n, "a slice of 1/16 of the credit, far above the cap");
    await setCaps(t.store, spendCap(500n), a, b);
    await a.ledger.flush();
    assert.equal((await t.view()).leased, 0n, "the holder that learned the cap gave its idle credit back");
    // As on one process: admitted while spent + open + reserve ≤ cap, on either holder.
    const { admitted, code } = await untilRefused([b, a], 100n);
    assert.equal(admitted, 4);
    assert.equal(code, "hourly_spend_limit");
    for (const side of [a, b]) {
      await assert.rejects(
        side.ledger.hold(side.acc, { amount: 100n, capCodes: CODES, now: Date.now() }),
        (e: GatewayError) => e.code === "hourly_spend_limit",
      );
    }
    const v = await t.view();
    assert.equal(v.window.hourSpent, 450n);
    assert.equal(v.leased, 0n);
    assert.equal(v.credited, 100_000n);
  } finally {
    await t.close();
  }
});

Deno.test("LeaseLedger: a holder that has not read a cap spends past it at most what it had leased; its next take reads it", async () => {
  const t = await setup(10_000n);
  try {
    const c = counted(t.store);
    const a = t.make("h_a", {}, c.store);
    const b = t.make("h_b");
    assert.ok(await spend(a.ledger, a.acc, 100n, 100n));
    await a.ledger.flush();
    const before = await t.view();
    const leased = before.leased; // A's lease when the cap is set: 800 − 100
    assert.equal(leased, 700n);
    await setCaps(t.store, spendCap(300n), b); // A's key refresh has not run
    // B counts A's whole lease as open: refused.
    await assert.rejects(
      b.ledger.hold(b.acc, { amount: 100n, capCodes: CODES, now: Date.now() }),
      (e: GatewayError) => e.code === "hourly_spend_limit",
    );
    // A holds from its lease without the store until it is used up; the take after reads the cap.
    const { admitted, code } = await untilRefused([a], 100n);
    assert.equal(admitted, 7);
    assert.equal(code, "hourly_spend_limit");
    assert.equal(a.acc.rec.caps.hourlySpend, null, "A's record still has no cap: its take read it");
    const v = await t.view();
    assert.equal(v.window.hourSpent, before.window.hourSpent + leased, "the bound: spent then + leased then");
    assert.equal(v.leased, 0n);
    assert.equal(c.calls.takes, 3, "the slice, the take that read the cap, the refused exact take");
  } finally {
    await t.close();
  }
});

Deno.test("LeaseLedger: a lowered cap counts at the next take, a lifted one lets the holds through again", async () => {
  const t = await setup(100_000n, { caps: spendCap(2_000n) });
  try {
    const a = t.make("h_a");
    const b = t.make("h_b");
    for (let i = 0; i < 10; i++) {
      assert.ok(await spend(i % 2 ? a.ledger : b.ledger, i % 2 ? a.acc : b.acc, 100n, 100n));
    }
    await a.ledger.flush();
    await b.ledger.flush();
    // Lowered in the store only (neither record has it yet): the next take of either holder goes by it.
    await setCaps(t.store, spendCap(1_100n));
    assert.deepEqual(await untilRefused([b, a], 50n), { admitted: 2, code: "hourly_spend_limit" });
    // Lifted in the store only: a holder that still thinks the key capped learns it at its take.
    await setCaps(t.store, { hourlySpend: null, dailySpend: null, hourlyReserve: null, dailyReserve: null });
    assert.ok(await spend(a.ledger, a.acc, 100n, 100n));
    assert.ok(await spend(b.ledger, b.acc, 100n, 100n));
    await a.ledger.flush();
    await b.ledger.flush();
    const v = await t.view();
    assert.equal(v.window.hourSpent, 1_100n + 200n);
    assert.ok(v.leased > 0n, "uncapped again: slices are leased");
  } finally {
    await t.close();
  }
});

Deno.test("LeaseLedger: a hold placed from the lease before the cap settles after it: reserve counted once, rest back", async () => {
  const t = await setup(100_000n);
  try {
    const a = t.make("h_a");
    await a.ledger.hold(a.acc, { amount: 100n, capCodes: CODES, now: Date.now() });
    await setCaps(t.store, { ...spendCap(null), hourlyReserve: 10_000n }, a);
    await a.ledger.flush();
    assert.equal((await t.view()).leased, 100n, "the open hold stays leased, the rest went back");
    a.ledger.settle(a.acc, 100n, 40n, usageRow("req_l", "key_a", { charged: 40n }));
    await a.ledger.hold(a.acc, { amount: 200n, capCodes: CODES, now: Date.now() });
    a.ledger.settle(a.acc, 200n, 200n, usageRow("req_d", "key_a", { charged: 200n }));
    await a.ledger.flush();
    const v = await t.view();
    assert.equal(v.window.hourReserved, 300n);
    assert.equal(v.window.hourSpent, 240n);
    assert.equal(v.leased, 0n);
    assert.equal(v.credited - v.spent - v.leased, 100_000n - 240n);
  } finally {
    await t.close();
  }
});
