/**
 * The Store contract of idempotency keys (store.ts IdempotencyStore: claim, get, renew, finish, the kept body,
 * release), one suite for every backend, registered beside the others in kv_store_test.ts and pg_store_test.ts.
 * Leases and expiry are judged against the `now` given; times start at the clock's now, because KV also removes
 * a finished record and its body by itself at `expiresAt` on its own clock.
 */
import assert from "node:assert/strict";
import { contractTest, type StoreBackend } from "./store_contract.ts";
import type { IdempotencyRecord, Store, StoredAnswerHead } from "../store.ts";
import { CHUNK_BYTES, CHUNKS_PER_COMMIT } from "../kv_chunks.ts";

const LEASE = 30_000;
const TTL = 3_600_000;
const FP = "a".repeat(64);
/** The longest key the engine lets through: 255 visible ASCII characters, every one of them. */
const LONG_KEY = Array.from({ length: 255 }, (_, i) => String.fromCharCode(0x21 + i % 94)).join("");
const MIB = 1024 * 1024;

const claim = (holder: string, now: number, fingerprint = FP) => ({
  fingerprint,
  holder,
  now,
  leaseMs: LEASE,
  ttlMs: TTL,
});

const running = (holder: string, now: number, fingerprint = FP): IdempotencyRecord => ({
  fingerprint,
  state: "running",
  holder,
  leaseUntil: now + LEASE,
  expiresAt: now + TTL,
});

const head = (bytes: number, stream = false): StoredAnswerHead => ({
  status: 200,
  headers: [
    ["content-type", stream ? "text/event-stream" : "application/json"],
    ["x-request-id", "req_1"],
    ["x-gateway-simulated", "true"],
  ],
  stream,
  bytes,
});

/** `size` bytes of a pattern that differs per `seed`, so a body read from another key or chunk shows. */
const body = (size: number, seed = 0) => new Uint8Array(size).map((_, i) => (i * 7 + seed) % 251);

export function idempotencyContract(backend: StoreBackend): void {
  const test = contractTest(backend);

  test("idempotency: a claim on an empty store is granted; a second claim, same or other fingerprint, gets the running record", async (ctx) => {
    const t = Date.now();
    for (const key of ["idem_1", "a/b:c?d=e&f#g%h \"'<>", LONG_KEY]) {
      assert.equal(await ctx.store.getIdempotency("key_a", key, t), null);
      assert.deepEqual(await ctx.store.claimIdempotency("key_a", key, claim("h1", t)), { claimed: true });
      assert.deepEqual(await ctx.store.getIdempotency("key_a", key, t), running("h1", t));
      const other = await ctx.open();
      assert.deepEqual(
        await other.claimIdempotency("key_a", key, claim("h2", t + 1)),
        { claimed: false, record: running("h1", t) },
      );
      assert.deepEqual(
        await ctx.store.claimIdempotency("key_a", key, claim("h1", t + LEASE - 1, "b".repeat(64))),
        { claimed: false, record: running("h1", t) },
        "another fingerprint, even from the holder, gets the record as stored",
      );
      assert.equal(await ctx.store.idempotentBody("key_a", key, t), null, "running: no body");
      assert.deepEqual(await (await ctx.reopen()).getIdempotency("key_a", key, t + 2), running("h1", t));
    }
  });

  test("idempotency: 10 concurrent claims on one key over two handles, exactly one granted", async (ctx) => {
    const two = await ctx.open();
    const t = Date.now();
    // Several rounds, the later ones on warm connections; the last round takes over an ended lease.
    for (let round = 0; round < 4; round++) {
      const now = round < 3 ? t : t + LEASE;
      const key = round < 3 ? `race_${round}` : "race_0";
      const holders = Array.from({ length: 10 }, (_, i) => `h_${round}_${i}`);
      const results = await Promise.all(
        holders.map((h, i) => (i % 2 === 0 ? ctx.store : two).claimIdempotency("key_a", key, claim(h, now))),
      );
      const winners = holders.filter((_, i) => results[i]!.claimed);
      assert.equal(winners.length, 1, `round ${round}: ${JSON.stringify(results)}`);
      const won = running(winners[0]!, now);
      for (const r of results) if (!r.claimed) assert.deepEqual(r.record, won);
      assert.deepEqual(await two.getIdempotency("key_a", key, now), won);
    }
  });

  test("idempotency: once the lease ends unrenewed another holder takes it; the old holder's renew and finish then write nothing", async (ctx) => {
    const t = Date.now();
    await ctx.store.claimIdempotency("key_a", "idem_1", claim("h1", t));
    const end = t + LEASE;
    assert.deepEqual(
      await ctx.store.claimIdempotency("key_a", "idem_1", claim("h2", end - 1)),
      { claimed: false, record: running("h1", t) },
      "the lease holds until leaseUntil",
    );
    const other = await ctx.open();
    assert.deepEqual(
      await other.claimIdempotency("key_a", "idem_1", claim("h2", end, "c".repeat(64))),
      { claimed: true },
      "ended at leaseUntil",
    );
    const taken = running("h2", end, "c".repeat(64));
    assert.deepEqual(await ctx.store.getIdempotency("key_a", "idem_1", end), taken);
    assert.equal(await ctx.store.renewIdempotency("key_a", "idem_1", "h1", end + 1, LEASE), false);
    const answer = { head: head(5), body: body(5), expiresAt: end + TTL };
    assert.equal(await ctx.store.finishIdempotency("key_a", "idem_1", "h1", answer), false);
    assert.deepEqual(await ctx.store.getIdempotency("key_a", "idem_1", end + 1), taken);
    assert.equal(await ctx.store.idempotentBody("key_a", "idem_1", end + 1), null);
    // The new holder's claim is whole: it finishes with its own answer.
    assert.equal(
      await other.finishIdempotency("key_a", "idem_1", "h2", { ...answer, body: body(5, 9) }),
      true,
    );
    assert.deepEqual(await ctx.store.idempotentBody("key_a", "idem_1", end + 1), body(5, 9));
  });

  test("idempotency: a renewal extends the holder's lease from its now; another holder's renewal writes nothing", async (ctx) => {
    const t = Date.now();
    await ctx.store.claimIdempotency("key_a", "idem_1", claim("h1", t));
    assert.equal(await ctx.store.renewIdempotency("key_a", "idem_1", "h2", t + 10, LEASE), false);
    assert.deepEqual(await ctx.store.getIdempotency("key_a", "idem_1", t + 10), running("h1", t));
    assert.equal(await ctx.store.renewIdempotency("key_a", "idem_1", "h1", t + 20_000, 2 * LEASE), true);
    const renewed = { ...running("h1", t), leaseUntil: t + 20_000 + 2 * LEASE };
    const other = await ctx.open();
    assert.deepEqual(await other.getIdempotency("key_a", "idem_1", t + LEASE), renewed);
    assert.deepEqual(
      await other.claimIdempotency("key_a", "idem_1", claim("h2", t + 20_000 + 2 * LEASE - 1)),
      { claimed: false, record: renewed },
      "held past the first lease",
    );
    assert.deepEqual(
      await other.claimIdempotency("key_a", "idem_1", claim("h2", t + 20_000 + 2 * LEASE)),
      { claimed: true },
    );
    assert.equal(
      await ctx.store.renewIdempotency("key_a", "idem_1", "h1", t + 20_000 + 2 * LEASE, LEASE),
      false,
    );
    // A record past its expiry is gone: no renewal brings it back.
    const u = t + 1;
    await ctx.store.claimIdempotency("key_a", "idem_2", claim("h1", u));
    assert.equal(await ctx.store.renewIdempotency("key_a", "idem_2", "h1", u + TTL, LEASE), false);
    assert.deepEqual(await ctx.store.getIdempotency("key_a", "idem_2", u + TTL - 1), running("h1", u));
  });

  test("idempotency: finish makes the record done with its head and body, byte for byte, at every chunk boundary up to 8 MiB", async (ctx) => {
    const t = Date.now();
    const sizes = [
      0,
      1,
      CHUNK_BYTES - 1,
      CHUNK_BYTES,
      CHUNK_BYTES + 1,
      CHUNK_BYTES * CHUNKS_PER_COMMIT,
      CHUNK_BYTES * CHUNKS_PER_COMMIT + 1,
      8 * MIB,
    ];
    const expiresAt = t + 2 * TTL;
    for (const [i, size] of sizes.entries()) {
      const key = `idem_${size}`;
      await ctx.store.claimIdempotency("key_a", key, claim("h1", t));
      const answer = { head: head(size, i % 2 === 1), body: body(size, i), expiresAt };
      assert.equal(await ctx.store.finishIdempotency("key_a", key, "h1", answer), true, `${size} bytes`);
    }
    const check = async (store: Store, now: number) => {
      for (const [i, size] of sizes.entries()) {
        const key = `idem_${size}`;
        const done = { ...running("h1", t), state: "done", expiresAt, answer: head(size, i % 2 === 1) };
        assert.deepEqual(await store.getIdempotency("key_a", key, now), done);
        const got = await store.idempotentBody("key_a", key, now);
        assert.equal(got?.byteLength, size, `${size} bytes`);
        assert.deepEqual(got, body(size, i), `${size} bytes`);
      }
    };
    await check(ctx.store, t + TTL); // past the claim's expiry: the answer's counts
    await check(await ctx.open(), t + 1);
    await check(await ctx.reopen(), expiresAt - 1);
    // Done: no claim takes it however late its lease, no renewal, no second finish, no release.
    const done = (await ctx.store.getIdempotency("key_a", "idem_1", t + LEASE))!;
    assert.deepEqual(
      await ctx.store.claimIdempotency("key_a", "idem_1", claim("h2", t + LEASE)),
      { claimed: false, record: done },
    );
    assert.equal(await ctx.store.renewIdempotency("key_a", "idem_1", "h1", t + 1, LEASE), false);
    const again = { head: head(2), body: body(2, 5), expiresAt: expiresAt + 1 };
    assert.equal(await ctx.store.finishIdempotency("key_a", "idem_1", "h1", again), false);
    await ctx.store.releaseIdempotency("key_a", "idem_1", "h1");
    assert.deepEqual(await ctx.store.getIdempotency("key_a", "idem_1", t + 1), done);
    assert.deepEqual(await ctx.store.idempotentBody("key_a", "idem_1", t + 1), body(1, 1));
  });

  test("idempotency: from expiresAt on a record is gone (no record, no body) and a new claim is granted", async (ctx) => {
    const t = Date.now();
    await ctx.store.claimIdempotency("key_a", "idem_done", claim("h1", t));
    const expiresAt = t + 2 * TTL;
    const answer = { head: head(70_000), body: body(70_000), expiresAt };
    assert.equal(await ctx.store.finishIdempotency("key_a", "idem_done", "h1", answer), true);
    assert.notEqual(await ctx.store.getIdempotency("key_a", "idem_done", expiresAt - 1), null);
    assert.equal(await ctx.store.getIdempotency("key_a", "idem_done", expiresAt), null);
    assert.equal(await ctx.store.idempotentBody("key_a", "idem_done", expiresAt), null);
    assert.deepEqual(
      await ctx.store.claimIdempotency("key_a", "idem_done", claim("h2", expiresAt, "d".repeat(64))),
      { claimed: true },
    );
    assert.deepEqual(
      await ctx.store.getIdempotency("key_a", "idem_done", expiresAt),
      running("h2", expiresAt, "d".repeat(64)),
    );
    assert.equal(
      await ctx.store.idempotentBody("key_a", "idem_done", expiresAt),
      null,
      "the old body is gone",
    );
    // A running record whose lease outlives its expiry is gone at the expiry all the same.
    await ctx.store.claimIdempotency("key_a", "idem_run", { ...claim("h1", t), leaseMs: 2 * TTL });
    assert.equal(await ctx.store.getIdempotency("key_a", "idem_run", t + TTL), null);
    assert.deepEqual(await ctx.store.claimIdempotency("key_a", "idem_run", claim("h2", t + TTL)), {
      claimed: true,
    });
  });

  test("idempotency: release by the holder deletes its running record; by another holder it does nothing", async (ctx) => {
    const t = Date.now();
    await ctx.store.claimIdempotency("key_a", "idem_1", claim("h1", t));
    const other = await ctx.open();
    await other.releaseIdempotency("key_a", "idem_1", "h2");
    await other.releaseIdempotency("key_a", "idem_none", "h1");
    assert.deepEqual(await ctx.store.getIdempotency("key_a", "idem_1", t), running("h1", t));
    await other.releaseIdempotency("key_a", "idem_1", "h1");
    assert.equal(await ctx.store.getIdempotency("key_a", "idem_1", t), null);
    assert.deepEqual(await ctx.store.claimIdempotency("key_a", "idem_1", claim("h2", t + 1)), {
      claimed: true,
    });
    const answer = { head: head(3), body: body(3), expiresAt: t + TTL };
    assert.equal(
      await ctx.store.finishIdempotency("key_a", "idem_1", "h1", answer),
      false,
      "released: not h1's",
    );
    assert.deepEqual(await ctx.store.getIdempotency("key_a", "idem_1", t + 1), running("h2", t + 1));
  });

  test("idempotency: the same key under two gateway keys is two records", async (ctx) => {
    const t = Date.now();
    assert.deepEqual(await ctx.store.claimIdempotency("key_a", "idem_1", claim("h1", t)), { claimed: true });
    assert.deepEqual(await ctx.store.claimIdempotency("key_b", "idem_1", claim("h2", t, "e".repeat(64))), {
      claimed: true,
    });
    const answer = { head: head(100_000), body: body(100_000, 3), expiresAt: t + TTL };
    assert.equal(
      await ctx.store.finishIdempotency("key_b", "idem_1", "h1", answer),
      false,
      "h1 holds key_a's",
    );
    assert.equal(await ctx.store.finishIdempotency("key_a", "idem_1", "h1", answer), true);
    assert.deepEqual(await ctx.store.getIdempotency("key_b", "idem_1", t), running("h2", t, "e".repeat(64)));
    assert.equal(await ctx.store.idempotentBody("key_b", "idem_1", t), null);
    assert.deepEqual(await ctx.store.idempotentBody("key_a", "idem_1", t), body(100_000, 3));
    await ctx.store.releaseIdempotency("key_a", "idem_1", "h2");
    await ctx.store.releaseIdempotency("key_b", "idem_1", "h2");
    assert.equal(await ctx.store.getIdempotency("key_b", "idem_1", t), null);
    assert.equal((await ctx.store.getIdempotency("key_a", "idem_1", t))?.state, "done");
  });

  test("idempotency: finish with a head whose bytes are not the body's length is a RangeError and writes nothing", async (ctx) => {
    const t = Date.now();
    await ctx.store.claimIdempotency("key_a", "idem_1", claim("h1", t));
    for (const [said, size] of [[10, 11], [11, 10], [0, 1], [200_000, 0]] as const) {
      await assert.rejects(
        ctx.store.finishIdempotency("key_a", "idem_1", "h1", {
          head: head(said),
          body: body(size),
          expiresAt: t + TTL,
        }),
        RangeError,
      );
    }
    assert.deepEqual(await ctx.store.getIdempotency("key_a", "idem_1", t), running("h1", t));
    assert.equal(await ctx.store.idempotentBody("key_a", "idem_1", t), null);
    const answer = { head: head(11), body: body(11), expiresAt: t + TTL };
    assert.equal(await ctx.store.finishIdempotency("key_a", "idem_1", "h1", answer), true);
    assert.deepEqual(await ctx.store.idempotentBody("key_a", "idem_1", t), body(11));
  });
}
