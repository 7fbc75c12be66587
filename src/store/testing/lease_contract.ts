/**
 * The Store contract of credit leases and of what several processes on one store need (store.ts: takeLease,
 * leaseView, renewLeases, lease deltas in commit, getKeyByHash, keyChanges; design: docs/ledger_leases.md),
 * one suite for every backend, registered next to storeContract in kv_store_test.ts and pg_store_test.ts. This
 * part: takes, expiry, reserves and renewals; lease_commit_contract.ts has the rest.
 * Times are fixed (a lease's expiry and the windows are judged against the `now` given, never the clock),
 * except for keyChanges, whose writer stamps changes with its own clock.
 */
import assert from "node:assert/strict";
import { contractTest, type StoreBackend } from "./store_contract.ts";
import type { LeaseView } from "../types.ts";
import { DAY_1, funded, HOUR, HOUR_10, type Sums, T, take, TTL, win } from "./lease_fixtures.ts";
import { batchId } from "./test_fixtures.ts";

export function leaseContract(backend: StoreBackend): void {
  const test = contractTest(backend);

  test("takeLease: grants within the available credit; the view is the one decide saw, rolled to now", async ({ store }) => {
    await store.createKey(funded("key_a", 1_000n));
    await store.commit({ id: batchId(), money: [{ keyId: "key_a", spent: 100n, credited: 0n }], usage: [] });
    const seen: LeaseView[] = [];
    const first = await store.takeLease({
      keyId: "key_a",
      holder: "h1",
      now: T,
      ttlMs: TTL,
      decide(view) {
        seen.push(view);
        return { grant: 300n, reserved: 0n };
      },
    });
    const before = { credited: 1_000n, spent: 100n, leased: 0n, mine: 0n, window: win() };
    assert.deepEqual(first, { view: before, grant: 300n });
    assert.deepEqual(seen.at(-1), before, "resolves with the view the decision saw");
    assert.deepEqual(await store.leaseView("key_a", "h1", T), { ...before, leased: 300n, mine: 300n });

    // The same holder again: its lease grows, the view shows what it had.
    const second = await take(store, "key_a", "h1", T + 1, 200n);
    assert.deepEqual(second, { view: { ...before, leased: 300n, mine: 300n }, grant: 200n });
    assert.deepEqual(await store.leaseView("key_a", "h1", T + 2), { ...before, leased: 500n, mine: 500n });

    // Another holder's lease counts in `leased`, not in `mine`.
    const other = await take(store, "key_a", "h2", T + 3, 400n);
    assert.deepEqual(other, { view: { ...before, leased: 500n, mine: 0n }, grant: 400n });
    assert.deepEqual(await store.leaseView("key_a", "h1", T + 4), { ...before, leased: 900n, mine: 500n });
    assert.deepEqual(await store.leaseView("key_a", "h2", T + 4), { ...before, leased: 900n, mine: 400n });
    assert.deepEqual(await store.leaseView("key_a", "h3", T + 4), { ...before, leased: 900n, mine: 0n });
    // Leases are not money: the counters are untouched.
    const rec = (await store.getKey("key_a"))!;
    assert.deepEqual([rec.credited, rec.spent, rec.balance], [1_000n, 100n, 900n]);
  });

  test("takeLease: decide is handed the key's caps as stored, a cap set by updateKey counting from the next take", async ({ store }) => {
    const none = { hourlySpend: null, dailySpend: null, hourlyReserve: null, dailyReserve: null };
    await store.createKey(funded("key_a", 1_000n));
    const caps: unknown[] = [];
    const decide = (_v: unknown, c: unknown) => (caps.push(c), { grant: 10n, reserved: 0n });
    await store.takeLease({ keyId: "key_a", holder: "h1", now: T, ttlMs: TTL, decide });
    assert.deepEqual(caps.at(-1), none);
    const capped = { ...none, hourlySpend: 500n, dailyReserve: 2n ** 70n };
    await store.updateKey({ ...(await store.getKey("key_a"))!, caps: capped });
    await store.takeLease({ keyId: "key_a", holder: "h2", now: T + 1, ttlMs: TTL, decide });
    assert.deepEqual(caps.at(-1), capped);
    await store.updateKey({ ...(await store.getKey("key_a"))!, caps: none });
    await store.takeLease({ keyId: "key_a", holder: "h1", now: T + 2, ttlMs: TTL, decide });
    assert.deepEqual(caps.at(-1), none, "a lifted cap");
  });

  test("takeLease: a grant of 0 with no reserve writes nothing (no lease, no renewed expiry)", async ({ store }) => {
    await store.createKey(funded("key_a", 1_000n));
    await take(store, "key_a", "h1", T, 100n);
    const held = { credited: 1_000n, spent: 0n, leased: 100n, mine: 100n, window: win() };
    assert.deepEqual(await take(store, "key_a", "h1", T + 500, 0n), { view: held, grant: 0n });
    assert.deepEqual(await take(store, "key_a", "h2", T + 500, 0n), {
      view: { ...held, mine: 0n },
      grant: 0n,
    });
    // h2 got no lease: there is nothing of it to renew.
    assert.deepEqual(await store.renewLeases("h2", ["key_a"], T + 600, TTL), []);
    assert.deepEqual(await store.leaseView("key_a", "h1", T + 999), held);
    // h1's expiry stayed T + TTL: the zero take did not extend it.
    assert.deepEqual(await store.leaseView("key_a", "h1", T + TTL), { ...held, leased: 0n, mine: 0n });
  });

  test("takeLease: a throwing decide rejects with its error and writes nothing", async ({ store }) => {
    await store.createKey(funded("key_a", 1_000n));
    await take(store, "key_a", "h1", T, 100n, 10n);
    const boom = new Error("decided against");
    await assert.rejects(
      store.takeLease({
        keyId: "key_a",
        holder: "h2",
        now: T + 1,
        ttlMs: TTL,
        decide() {
          throw boom;
        },
      }),
      (e) => e === boom,
    );
    const unchanged = {
      credited: 1_000n,
      spent: 0n,
      leased: 100n,
      mine: 0n,
      window: win({ hr: 10n, dr: 10n }),
    };
    assert.deepEqual(await store.leaseView("key_a", "h2", T + 2), unchanged);
    assert.deepEqual(await store.renewLeases("h2", ["key_a"], T + 2, TTL), []);
  });

  test("takeLease: refuses (RangeError) a grant above credited − spent − leased or below 0, and a reserve below 0", async ({ store }) => {
    await store.createKey(funded("key_a", 1_000n));
    await store.commit({ id: batchId(), money: [{ keyId: "key_a", spent: 100n, credited: 0n }], usage: [] });
    await take(store, "key_a", "h1", T, 300n);
    const view = { credited: 1_000n, spent: 100n, leased: 300n, mine: 0n, window: win() };
    // A refused take writes neither its grant nor its reserve.
    for (const [grant, reserved] of [[601n, 5n], [-1n, 5n], [10n, -1n], [0n, -1n]] as const) {
      await assert.rejects(
        take(store, "key_a", "h2", T + 1, grant, reserved),
        RangeError,
        `${grant}/${reserved}`,
      );
      assert.deepEqual(
        await store.leaseView("key_a", "h2", T + 1),
        view,
        `nothing written: ${grant}/${reserved}`,
      );
      assert.deepEqual(await store.renewLeases("h2", ["key_a"], T + 1, TTL), []);
    }
    // Exactly the available credit is granted.
    assert.deepEqual(await take(store, "key_a", "h2", T + 2, 600n), { view, grant: 600n });
    assert.deepEqual(await store.leaseView("key_a", "h2", T + 2), { ...view, leased: 900n, mine: 600n });
    await assert.rejects(take(store, "key_a", "h3", T + 2, 1n), RangeError);
  });

  test("takeLease rejects on an unknown key; leaseView is null for it", async ({ store }) => {
    await assert.rejects(take(store, "key_none", "h1", T, 0n));
    await assert.rejects(take(store, "key_none", "h1", T, 1n, 1n));
    assert.equal(await store.leaseView("key_none", "h1", T), null);
  });

  test("lease expiry: live until now + ttl exclusive; its credit is then another's; a new take starts from 0", async ({ store }) => {
    await store.createKey(funded("key_a", 200n));
    await take(store, "key_a", "h1", T, 120n);
    const view = (leased: bigint, mine: bigint) => ({
      credited: 200n,
      spent: 0n,
      leased,
      mine,
      window: win(),
    });
    assert.deepEqual(await store.leaseView("key_a", "h1", T + 999), view(120n, 120n));
    assert.deepEqual(await store.leaseView("key_a", "h2", T + 999), view(120n, 0n));
    await assert.rejects(take(store, "key_a", "h2", T + 999, 81n), RangeError, "still leased at T + 999");

    assert.deepEqual(await store.leaseView("key_a", "h1", T + 1_000), view(0n, 0n));
    assert.deepEqual(await take(store, "key_a", "h2", T + 1_000, 150n), { view: view(0n, 0n), grant: 150n });
    // h1 again after its expiry: mine is the new grant, not 120 + grant.
    assert.deepEqual(await take(store, "key_a", "h1", T + 1_000, 50n), { view: view(150n, 0n), grant: 50n });
    assert.deepEqual(await store.leaseView("key_a", "h1", T + 1_001), view(200n, 50n));
    assert.deepEqual(await store.leaseView("key_a", "h2", T + 1_001), view(200n, 150n));
  });

  test("takeLease: reserved adds to the windows rolled to now; the next hour resets the hour, the next day both", async ({ store }) => {
    await store.createKey(funded("key_a", 1_000n));
    const at = (hourStart: number, dayStart: number, w: Partial<Sums>) => ({
      credited: 1_000n,
      spent: 0n,
      leased: 0n,
      mine: 0n,
      window: win(w, hourStart, dayStart),
    });
    await take(store, "key_a", "h1", T, 10n, 40n);
    await take(store, "key_a", "h2", T + 1, 0n, 5n); // a reserve alone is written too
    assert.deepEqual(await store.leaseView("key_a", "h3", T + 2), {
      ...at(HOUR_10, DAY_1, { hr: 45n, dr: 45n }),
      leased: 10n,
    });
    // 11:30: the lease has expired, the hour's sums are gone, the day's kept.
    const next = T + HOUR;
    assert.deepEqual(await store.leaseView("key_a", "h3", next), at(HOUR_10 + HOUR, DAY_1, { dr: 45n }));
    assert.deepEqual(
      await take(store, "key_a", "h3", next, 0n, 7n),
      { view: at(HOUR_10 + HOUR, DAY_1, { dr: 45n }), grant: 0n },
      "the view a take sees is rolled to its now, before its own reserve",
    );
    assert.deepEqual(
      await store.leaseView("key_a", "h3", next + 1),
      at(HOUR_10 + HOUR, DAY_1, { hr: 7n, dr: 52n }),
    );
    const tomorrow = Date.UTC(2026, 0, 2, 0, 15);
    const tomorrowHour = Date.UTC(2026, 0, 2, 0);
    assert.deepEqual(
      await store.leaseView("key_a", "h3", tomorrow),
      at(tomorrowHour, Date.UTC(2026, 0, 2), {}),
    );
  });

  test("renewLeases extends only the holder's live leases on the keys given, and names them", async ({ store }) => {
    for (const id of ["k1", "k2", "k3", "k4"]) await store.createKey(funded(id, 1_000n));
    await take(store, "k1", "h1", T, 100n);
    await take(store, "k1", "h2", T, 200n);
    await take(store, "k2", "h1", T, 100n, 0n, 100); // expired by the renewal at T + 500
    await take(store, "k4", "h1", T, 100n); // live, but not among the keys renewed
    // k3: h1 has no lease there.
    const renewed = await store.renewLeases("h1", ["k1", "k2", "k3"], T + 500, 2_000);
    assert.deepEqual([...renewed].sort(), ["k1"]);

    const view = (leased: bigint, mine: bigint) => ({
      credited: 1_000n,
      spent: 0n,
      leased,
      mine,
      window: win(),
    });
    // At T + TTL the leases not renewed are gone, h1's on k1 lives until T + 2_500.
    assert.deepEqual(await store.leaseView("k1", "h1", T + TTL), view(100n, 100n));
    assert.deepEqual(
      await store.leaseView("k1", "h2", T + TTL),
      view(100n, 0n),
      "h2's lease was not renewed",
    );
    assert.deepEqual(await store.leaseView("k4", "h1", T + TTL), view(0n, 0n));
    assert.deepEqual(
      await store.leaseView("k2", "h1", T + 500),
      view(0n, 0n),
      "an expired lease is not revived",
    );
    assert.deepEqual(await store.leaseView("k3", "h1", T + 500), view(0n, 0n));
    assert.deepEqual(await store.leaseView("k1", "h1", T + 2_499), view(100n, 100n));
    assert.deepEqual(await store.leaseView("k1", "h1", T + 2_500), view(0n, 0n));
    assert.deepEqual(
      await store.renewLeases("h1", ["k1", "k2"], T + 2_500, 2_000),
      [],
      "nothing live is left",
    );
  });
}
