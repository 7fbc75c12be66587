/**
 * The Store contract of shared documents and request counters (store.ts SharedDocuments, WindowCounters),
 * one suite for every backend, registered next to leaseContract in kv_store_test.ts and
 * pg_store_test.ts. Counts are judged against the `now` given, never the clock; a watch against a bounded wait.
 */
import assert from "node:assert/strict";
import type { JsonDocument, Store } from "../store.ts";
import { contractTest, type StoreBackend } from "./store_contract.ts";

const HOUR = 3_600_000;
/** 10:30 UTC on a day: the hour window starts at 10:00, the day window at midnight. */
const T = Date.UTC(2026, 0, 1, 10, 30);
/** The longest a watch may take to call back after a change. */
const WATCH_BOUND_MS = 2_000;
/** Time for a watch to be listening before the test changes the document. */
const WATCH_SETTLE_MS = 500;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `cond` holds, at most `ms`; whether it came true. */
async function until(cond: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!cond() && Date.now() < deadline) await sleep(10);
  return cond();
}

/** The document as it is (a change that writes nothing). */
const readDoc = (store: Store) => store.updateDocument(DOC, (doc) => ({ doc: null, result: doc }));

/** Adds 1 to the document's `n`; resolves with the `n` it saw. */
const increment = (store: Store) =>
  store.updateDocument(DOC, (doc) => {
    const n = (doc?.n as number | undefined) ?? 0;
    return { doc: { ...doc, n: n + 1 }, result: n };
  });

/** The document the suite changes. */
const DOC = "test_doc";

const NO_LIMITS = { hour: null, day: null };

export function documentsContract(backend: StoreBackend): void {
  const test = contractTest(backend);

  test("updateDocument: the first change sees null; the result is returned; a null doc changes nothing", async (ctx) => {
    const seen: (JsonDocument | null)[] = [];
    const first = await ctx.store.updateDocument(DOC, (doc) => {
      seen.push(doc);
      return { doc: { accounts: ["a1", "a2"], queue: [] }, result: "first" };
    });
    assert.equal(first, "first");
    assert.deepEqual(seen, [null]);
    const kept = await ctx.store.updateDocument(DOC, (doc) => ({ doc: null, result: doc }));
    assert.deepEqual(kept, { accounts: ["a1", "a2"], queue: [] });
    assert.deepEqual(await readDoc(ctx.store), { accounts: ["a1", "a2"], queue: [] });
    await ctx.store.updateDocument(DOC, () => ({
      doc: { accounts: ["a1"], queue: [{ key: "k", at: T }] },
      result: 0,
    }));
    assert.deepEqual(await readDoc(await ctx.reopen()), { accounts: ["a1"], queue: [{ key: "k", at: T }] });
  });

  test("updateDocument: a throwing change rejects with its error and writes nothing", async ({ store }) => {
    await increment(store);
    const boom = new Error("change refused");
    await assert.rejects(
      store.updateDocument(DOC, () => {
        throw boom;
      }),
      (err: unknown) => err === boom,
    );
    assert.deepEqual(await readDoc(store), { n: 1 });
  });

  test("updateDocument: 40 concurrent increments over two handles end at exactly 40", async (ctx) => {
    const two = await ctx.open();
    const seen = await Promise.all(
      Array.from({ length: 40 }, (_, i) => increment(i % 2 === 0 ? ctx.store : two)),
    );
    // Each change saw the one before it: every value from 0 to 39 once.
    assert.deepEqual(seen.sort((a, b) => a - b), Array.from({ length: 40 }, (_, i) => i));
    assert.deepEqual(await readDoc(ctx.store), { n: 40 });
    assert.deepEqual(await readDoc(two), { n: 40 });
  });

  test("updateDocument: a 50 KB document round-trips; one above 60,000 bytes of JSON is refused", async (ctx) => {
    // Cyrillic text: 2 bytes a character in UTF-8, so the limit is on bytes, not characters.
    const queue = Array.from(
      { length: 700 },
      (_, i) => ({ key: `key_${i}`, at: T + i, note: "ожидает «очередь»" }),
    );
    const doc = { queue, accounts: { a1: { session: "s1", until: T + HOUR } } };
    const size = new TextEncoder().encode(JSON.stringify(doc)).byteLength;
    assert.ok(size > 45_000 && size < 60_000, `document of ${size} bytes`);
    await ctx.store.updateDocument(DOC, () => ({ doc, result: null }));
    assert.deepEqual(await readDoc(await ctx.reopen()), doc);

    const big = { queue, pad: "я".repeat(6_000) };
    assert.ok(new TextEncoder().encode(JSON.stringify(big)).byteLength > 60_000);
    await assert.rejects(ctx.store.updateDocument(DOC, () => ({ doc: big, result: null })), RangeError);
    assert.deepEqual(await readDoc(ctx.store), doc);
  });

  test("updateDocument: documents of different names are apart", async ({ store }) => {
    await increment(store);
    const other = await store.updateDocument("other_doc", (doc) => ({ doc: { m: 1 }, result: doc }));
    assert.equal(other, null);
    assert.deepEqual(await readDoc(store), { n: 1 });
    assert.deepEqual(await store.updateDocument("other_doc", (doc) => ({ doc: null, result: doc })), {
      m: 1,
    });
  });

  test("watchDocument: a change on one handle calls the watch of another; stop() ends it", async (ctx) => {
    const two = await ctx.open();
    let calls = 0;
    const stop = two.watchDocument(DOC, () => calls++);
    try {
      await sleep(WATCH_SETTLE_MS);
      for (let round = 0; round < 3; round++) {
        calls = 0;
        await increment(ctx.store);
        assert.ok(await until(() => calls > 0, WATCH_BOUND_MS), `round ${round}: no call within the bound`);
      }
    } finally {
      stop();
    }
    await sleep(WATCH_SETTLE_MS);
    calls = 0;
    await increment(ctx.store);
    await sleep(WATCH_SETTLE_MS);
    assert.equal(calls, 0, "no call after stop()");
  });

  test("countRequest: the hour limit, refusals not counted, the day limit, the next hour and day", async ({ store }) => {
    const limits = { hour: 3, day: 5 };
    const at10 = [];
    for (let i = 0; i < 5; i++) at10.push(await store.countRequest("key_a", "c1", T + i, limits));
    assert.deepEqual(at10, ["ok", "ok", "ok", "hour", "hour"]);
    // 11:30: a new hour; the day keeps its 3 (the two refusals did not count).
    const at11 = [];
    for (let i = 0; i < 3; i++) at11.push(await store.countRequest("key_a", "c1", T + HOUR + i, limits));
    assert.deepEqual(at11, ["ok", "ok", "day"]);
    // Both full: the hour is named first.
    assert.equal(await store.countRequest("key_a", "c1", T + HOUR + 5, { hour: 2, day: 5 }), "hour");
    // The next day (00:05 UTC) starts both windows again.
    assert.equal(await store.countRequest("key_a", "c1", Date.UTC(2026, 0, 2, 0, 5), limits), "ok");
    assert.equal(
      await store.countRequest("key_a", "c1", Date.UTC(2026, 0, 2, 0, 6), { hour: 1, day: 5 }),
      "hour",
    );
  });

  test("countRequest: null limits always admit and still count; a zero limit admits none", async ({ store }) => {
    for (let i = 0; i < 5; i++) assert.equal(await store.countRequest("key_a", "c1", T, NO_LIMITS), "ok");
    assert.equal(await store.countRequest("key_a", "c1", T, { hour: 5, day: null }), "hour");
    assert.equal(await store.countRequest("key_a", "c1", T, { hour: null, day: 5 }), "day");
    assert.equal(await store.countRequest("key_a", "c1", T, { hour: 6, day: 6 }), "ok");
    assert.equal(await store.countRequest("key_b", "c1", T, { hour: 0, day: null }), "hour");
    assert.equal(await store.countRequest("key_b", "c1", T, { hour: null, day: 0 }), "day");
    assert.equal(await store.countRequest("key_b", "c1", T, { hour: 1, day: 1 }), "ok");
  });

  test("countRequest: keys and counters count apart; a window stamped ahead of now is kept", async ({ store }) => {
    const one = { hour: 1, day: null };
    assert.equal(await store.countRequest("key_a", "c1", T, one), "ok");
    assert.equal(await store.countRequest("key_a", "c1", T, one), "hour");
    assert.equal(await store.countRequest("key_a", "other", T, one), "ok");
    assert.equal(await store.countRequest("key_b", "c1", T, one), "ok");
    assert.equal(await store.countRequest("key_a", "other", T, one), "hour");
    // Another process counted at 11:30; this one's clock says 10:59: the 11:00 hour stays the current one.
    assert.equal(await store.countRequest("key_c", "c1", T + HOUR, one), "ok");
    assert.equal(await store.countRequest("key_c", "c1", T + 29 * 60_000, one), "hour");
  });

  test("countRequest: 30 concurrent counts over two handles with an hour limit of 10 admit exactly 10", async (ctx) => {
    const two = await ctx.open();
    const limits = { hour: 10, day: null };
    const verdicts = await Promise.all(
      Array.from(
        { length: 30 },
        (_, i) => (i % 2 === 0 ? ctx.store : two).countRequest("key_a", "c1", T, limits),
      ),
    );
    assert.equal(verdicts.filter((v) => v === "ok").length, 10);
    assert.equal(verdicts.filter((v) => v === "hour").length, 20);
    assert.equal(await two.countRequest("key_a", "c1", T + HOUR, { hour: 1, day: 11 }), "ok");
    assert.equal(await ctx.store.countRequest("key_a", "c1", T + HOUR, { hour: 2, day: 11 }), "day");
  });
}
