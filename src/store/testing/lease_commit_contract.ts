/**
 * The lease contract, second part (see lease_contract.ts): lease deltas in commit, many keys in one batch,
 * amounts beyond 2^64, concurrency over two store handles, and how a process finds keys another one made
 * (getKeyByHash, keyChanges). Registered next to leaseContract in kv_store_test.ts and pg_store_test.ts.
 */
import assert from "node:assert/strict";
import type { Store } from "../store.ts";
import { contractTest, type StoreBackend } from "./store_contract.ts";
import { batchId, keyRecord, usageRow } from "./test_fixtures.ts";
import type { LeaseView } from "../types.ts";
import { byId, funded, HOUR, HOUR_10, min, sum, type Sums, T, take, TTL, win } from "./lease_fixtures.ts";

export function leaseCommitContract(backend: StoreBackend): void {
  const test = contractTest(backend);

  test("commit with lease deltas: spent moves out of the lease, the rest is given back, windows add spent and reserved", async ({ store }) => {
    await store.createKey(funded("key_a", 1_000n));
    // Both live past the hour the commits below reach.
    await take(store, "key_a", "h1", T, 100n, 0n, 2 * HOUR);
    await take(store, "key_a", "h2", T, 200n, 0n, 2 * HOUR);
    const view = (spent: bigint, leased: bigint, mine: bigint, w: Partial<Sums>, hourStart = HOUR_10) => ({
      credited: 1_000n,
      spent,
      leased,
      mine,
      window: win(w, hourStart),
    });
    await store.commit({
      id: batchId(),
      money: [{
        keyId: "key_a",
        spent: 30n,
        credited: 0n,
        lease: { holder: "h1", returned: 20n, reserved: 50n },
      }],
      usage: [],
      at: T,
    });
    assert.equal((await store.getKey("key_a"))!.spent, 30n);
    assert.deepEqual(
      await store.leaseView("key_a", "h1", T + 1),
      view(30n, 250n, 50n, { hs: 30n, ds: 30n, hr: 50n, dr: 50n }),
    );

    // Two deltas of one batch on the same lease both count.
    await store.commit({
      id: batchId(),
      money: [
        { keyId: "key_a", spent: 10n, credited: 0n, lease: { holder: "h1", returned: 5n, reserved: 0n } },
        { keyId: "key_a", spent: 20n, credited: 0n, lease: { holder: "h1", returned: 0n, reserved: 7n } },
      ],
      usage: [],
      at: T + 1,
    });
    assert.deepEqual(
      await store.leaseView("key_a", "h1", T + 2),
      view(60n, 215n, 15n, { hs: 60n, ds: 60n, hr: 57n, dr: 57n }),
    );

    // More than is left of the lease: it is floored at 0, all of the spend still counts; rolled to `at`.
    await store.commit({
      id: batchId(),
      money: [{
        keyId: "key_a",
        spent: 40n,
        credited: 0n,
        lease: { holder: "h1", returned: 20n, reserved: 0n },
      }],
      usage: [],
      at: T + HOUR,
    });
    const nextHour = { hs: 40n, ds: 100n, hr: 0n, dr: 57n };
    assert.deepEqual(
      await store.leaseView("key_a", "h1", T + HOUR),
      view(100n, 200n, 0n, nextHour, HOUR_10 + HOUR),
    );
    assert.deepEqual(
      await store.leaseView("key_a", "h2", T + HOUR),
      view(100n, 200n, 200n, nextHour, HOUR_10 + HOUR),
    );

    // A holder with no lease: none appears, the spend and the windows count.
    await store.commit({
      id: batchId(),
      money: [{
        keyId: "key_a",
        spent: 5n,
        credited: 0n,
        lease: { holder: "h3", returned: 5n, reserved: 1n },
      }],
      usage: [],
      at: T + HOUR,
    });
    const after = { hs: 45n, ds: 105n, hr: 1n, dr: 58n };
    assert.deepEqual(
      await store.leaseView("key_a", "h3", T + HOUR),
      view(105n, 200n, 0n, after, HOUR_10 + HOUR),
    );
    assert.deepEqual(
      await store.renewLeases("h3", ["key_a"], T + HOUR, TTL),
      [],
      "the absent lease stays absent",
    );

    // Deltas without a lease move the counters only, with or without `at`.
    await store.commit({
      id: batchId(),
      money: [{ keyId: "key_a", spent: 3n, credited: 10n }],
      usage: [],
      at: T + HOUR,
    });
    await store.commit({ id: batchId(), money: [{ keyId: "key_a", spent: 2n, credited: 0n }], usage: [] });
    assert.deepEqual(await store.leaseView("key_a", "h2", T + HOUR), {
      ...view(110n, 200n, 200n, after, HOUR_10 + HOUR),
      credited: 1_010n,
    });
    const rec = (await store.getKey("key_a"))!;
    assert.deepEqual([rec.credited, rec.spent, rec.balance], [1_010n, 110n, 900n]);
  });

  test("one batch settles leases on many keys and holders with its usage rows; renewLeases renews them all", async ({ store }) => {
    // 12 keys: more than one KV read or renewal atomic takes (10).
    const ids = Array.from({ length: 12 }, (_, i) => `k${String(i).padStart(2, "0")}`);
    for (const [i, id] of ids.entries()) {
      await store.createKey(funded(id, 1_000n));
      await take(store, id, "h1", T, 100n + BigInt(i));
    }
    await take(store, "k00", "h2", T, 50n);
    await store.createKey(funded("k_none", 1_000n));
    await store.commit({
      id: batchId(),
      money: [
        ...ids.map((id, i) => ({
          keyId: id,
          spent: BigInt(i + 1),
          credited: 0n,
          lease: { holder: "h1", returned: 1n, reserved: 2n },
        })),
        { keyId: "k00", spent: 5n, credited: 0n, lease: { holder: "h2", returned: 0n, reserved: 0n } },
      ],
      usage: ids.map((id, i) => usageRow(`req_${id}`, id, { createdAt: T, charged: BigInt(i + 1) })),
      at: T + 1,
    });
    const renewed = await store.renewLeases("h1", [...ids, "k_none"], T + 500, TTL);
    assert.deepEqual([...renewed].sort(), ids);

    // After the leases' first expiry: h1's renewed ones hold 100 + i − (i + 1) − 1, h2's is gone.
    for (const [i, id] of ids.entries()) {
      const spent = BigInt(i + 1) + (id === "k00" ? 5n : 0n);
      assert.deepEqual(await store.leaseView(id, "h1", T + TTL), {
        credited: 1_000n,
        spent,
        leased: 98n,
        mine: 98n,
        window: win({ hs: spent, ds: spent, hr: 2n, dr: 2n }),
      }, id);
      assert.deepEqual(
        (await store.listUsage(id, { limit: 5 })).rows.map((r) => [r.requestId, r.charged]),
        [[`req_${id}`, BigInt(i + 1)]],
      );
    }
    assert.deepEqual((await store.leaseView("k00", "h2", T + TTL - 1))!.mine, 45n);
  });

  test("leases and windows far beyond 2^64 are exact and kept across a reopen", async (ctx) => {
    const huge = 10n ** 27n; // the API's largest amount, 10^15 USD
    await ctx.store.createKey(funded("key_a", huge));
    const grant = 2n ** 70n + 3n;
    await take(ctx.store, "key_a", "h1", T, grant, 2n ** 66n, 2 * HOUR);
    await ctx.store.commit({
      id: batchId(),
      money: [{
        keyId: "key_a",
        spent: 2n ** 65n,
        credited: 0n,
        lease: { holder: "h1", returned: 2n ** 64n, reserved: 2n ** 65n },
      }],
      usage: [],
      at: T + 1,
    });
    const store = await ctx.reopen();
    assert.deepEqual(await store.leaseView("key_a", "h1", T + 2), {
      credited: huge,
      spent: 2n ** 65n,
      leased: grant - 2n ** 65n - 2n ** 64n,
      mine: grant - 2n ** 65n - 2n ** 64n,
      window: win({ hs: 2n ** 65n, ds: 2n ** 65n, hr: 2n ** 66n + 2n ** 65n, dr: 2n ** 66n + 2n ** 65n }),
    });
    assert.deepEqual(await store.renewLeases("h1", ["key_a"], T + 3, TTL), ["key_a"]);
  });

  test("takeLease: concurrent takes on two handles together grant exactly the credit, one after another", async (ctx) => {
    const two = await ctx.open();
    await ctx.store.createKey(funded("key_a", 1_000n));
    const holders = ["h0", "h1", "h2", "h3"];
    // 20 takes asking 3000 in all; every holder takes through both handles (its lease grows from two sides).
    const takes = Array.from({ length: 20 }, (_, i) => {
      const holder = holders[i % 4]!;
      const store = Math.floor(i / 4) % 2 === 0 ? ctx.store : two;
      return store.takeLease({
        keyId: "key_a",
        holder,
        now: T,
        ttlMs: 60_000,
        decide: (v) => ({ grant: min(v.credited - v.spent - v.leased, 150n), reserved: 1n }),
      }).then((r) => ({ holder, ...r }));
    });
    const results = await Promise.all(takes);
    assert.equal(sum(results.map((r) => r.grant)), 1_000n);
    // Serialised: each take saw every grant before it, and granted what its decide said on that view.
    results.sort((a, b) => a.view.leased < b.view.leased ? -1 : a.view.leased > b.view.leased ? 1 : 0);
    let leased = 0n;
    for (const r of results) {
      assert.equal(r.view.leased, leased, `a take saw ${r.view.leased} leased, ${leased} were`);
      assert.equal(r.grant, min(1_000n - leased, 150n));
      leased += r.grant;
    }
    const window = win({ hr: 20n, dr: 20n });
    for (const holder of holders) {
      const mine = sum(results.filter((r) => r.holder === holder).map((r) => r.grant));
      assert.deepEqual(await two.leaseView("key_a", holder, T), {
        credited: 1_000n,
        spent: 0n,
        leased: 1_000n,
        mine,
        window,
      });
    }
  });

  test("takes interleaved with settlements on two handles: credited = available + leased + spent, exactly", async (ctx) => {
    const two = await ctx.open();
    await ctx.store.createKey(funded("key_a", 1_000n));
    let spent = 0n;
    const views: LeaseView[] = [];
    // A holder is one process: it takes, then settles half of its lease and gives a quarter back.
    const holder = async (store: Store, name: string) => {
      let mine = 0n;
      for (let round = 0; round < 6; round++) {
        const { view, grant } = await store.takeLease({
          keyId: "key_a",
          holder: name,
          now: T,
          ttlMs: 60_000,
          decide: (v) => ({ grant: min(v.credited - v.spent - v.leased, 120n), reserved: 0n }),
        });
        views.push(view);
        assert.equal(view.mine, mine, `${name} round ${round}`);
        mine += grant;
        const settle = mine / 2n, back = mine / 4n;
        await store.commit({
          id: batchId(),
          money: [{
            keyId: "key_a",
            spent: settle,
            credited: 0n,
            lease: { holder: name, returned: back, reserved: 0n },
          }],
          usage: [],
          at: T,
        });
        mine -= settle + back;
        spent += settle;
      }
      return mine;
    };
    const left = await Promise.all([
      holder(ctx.store, "h0"),
      holder(two, "h1"),
      holder(ctx.store, "h2"),
      holder(two, "h3"),
    ]);
    for (const v of views) assert.ok(v.credited - v.spent - v.leased >= 0n, `a view with ${v.leased} leased`);
    const leased = sum(left);
    assert.ok(spent > 0n && leased > 0n, `${spent} spent, ${leased} leased`);
    assert.ok(spent + leased <= 1_000n);
    const end = (await ctx.store.leaseView("key_a", "h0", T))!;
    assert.deepEqual(end, {
      credited: 1_000n,
      spent,
      leased,
      mine: left[0],
      window: win({ hs: spent, ds: spent }),
    });
    assert.equal((await two.getKey("key_a"))!.balance, 1_000n - spent);
  });

  test("getKeyByHash finds a key another process created, with its money; null for an unknown hash", async (ctx) => {
    const two = await ctx.open();
    const rec = keyRecord("key_a", { name: "ключ", credited: 100n, balance: 100n, membership: "private" });
    await two.createKey(rec);
    await two.commit({ id: batchId(), money: [{ keyId: "key_a", spent: 30n, credited: 5n }], usage: [] });
    assert.deepEqual(await ctx.store.getKeyByHash("hash_key_a"), {
      ...rec,
      credited: 105n,
      spent: 30n,
      balance: 75n,
    });
    assert.equal(await ctx.store.getKeyByHash("hash_key_none"), null);
    assert.equal(await ctx.store.getKeyByHash("key_a"), null, "the id is not the hash");
  });

  test("keyChanges: keys created or updated since, with their metadata and money, seen by another process", async (ctx) => {
    const two = await ctx.open();
    const since = Date.now();
    const a = funded("key_a", 100n);
    await two.createKey(a);
    await two.createKey(funded("key_b", 50n));
    await two.commit({ id: batchId(), money: [{ keyId: "key_a", spent: 40n, credited: 0n }], usage: [] });
    const changed = await ctx.store.keyChanges(since);
    assert.deepEqual(byId(changed, "key_a"), { ...a, spent: 40n, balance: 60n });
    assert.deepEqual(byId(changed, "key_b"), funded("key_b", 50n));

    const updatedSince = Date.now();
    await two.updateKey({ ...a, revoked: true, name: "отозван" }); // its stale money is ignored
    assert.deepEqual(
      byId(await ctx.store.keyChanges(updatedSince), "key_a"),
      { ...a, revoked: true, name: "отозван", spent: 40n, balance: 60n },
    );
    assert.deepEqual(
      await ctx.store.keyChanges(Date.now() + 60_000),
      [],
      "nothing changed after a future time",
    );
  });
}
