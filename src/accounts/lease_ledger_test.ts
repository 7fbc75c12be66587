/**
 * The leasing ledger (lease_ledger.ts) over a real store shared by two ledgers — two "processes" — on one
 * in-memory Deno KV: steady-state holds without a store call, settlement moving credit lease → spent, the
 * money property under concurrency, idle give-back, a dead holder's expiry, caps across both, and the codes.
 */
import assert from "node:assert/strict";
import { GatewayError } from "../errors/gateway_error.ts";
import { KvStore } from "../store/kv_store.ts";
import type { Store } from "../store/store.ts";
import { keyRecord, usageRow } from "../store/test_fixtures.ts";
import type { KeyRecord } from "../store/types.ts";
import { type Account, newAccount } from "./account.ts";
import type { CapCodes } from "./caps.ts";
import { LeaseLedger, type LeaseOptions } from "./lease_ledger.ts";

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
    const l = new LeaseLedger(on, { holder, ttlMs: 30_000, idleMs: 60_000, commitIntervalMs: 1, ...opts });
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
