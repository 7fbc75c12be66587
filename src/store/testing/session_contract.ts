/**
 * The Store contract of dashboard sessions (store.ts putSession, getSession, deleteSession), one
 * suite for every backend, registered beside the others in kv_store_test.ts and pg_store_test.ts. Expiry is
 * judged against the `now` given, never the clock.
 */
import assert from "node:assert/strict";
import { contractTest, type StoreBackend } from "./store_contract.ts";
import type { SessionRecord } from "../types.ts";

const T = Date.UTC(2026, 0, 1, 10, 30);
const HOUR = 3_600_000;

const session = (hash: string, keyId = "key_a", ttl = 12 * HOUR): SessionRecord => ({
  hash,
  keyId,
  keyHash: "f".repeat(64),
  createdAt: T,
  expiresAt: T + ttl,
});

export function sessionContract(backend: StoreBackend): void {
  const test = contractTest(backend);

  test("sessions: a stored session is read back by its hash until it expires, on another process too", async (ctx) => {
    await ctx.store.putSession(session("a".repeat(64)));
    await ctx.store.putSession(session("b".repeat(64), "key_b"));
    assert.deepEqual(await ctx.store.getSession("a".repeat(64), T), session("a".repeat(64)));
    const other = await ctx.open();
    assert.deepEqual(await other.getSession("b".repeat(64), T + HOUR), session("b".repeat(64), "key_b"));
    assert.equal(await ctx.store.getSession("a".repeat(64), T + 12 * HOUR - 1) !== null, true);
    assert.equal(await ctx.store.getSession("a".repeat(64), T + 12 * HOUR), null, "expired at expiresAt");
    assert.equal(await ctx.store.getSession("c".repeat(64), T), null, "unknown");
    assert.deepEqual(await (await ctx.reopen()).getSession("a".repeat(64), T), session("a".repeat(64)));
  });

  test("sessions: a deleted session is gone for every process; deleting an unknown one is nothing", async (ctx) => {
    const other = await ctx.open();
    await ctx.store.putSession(session("a".repeat(64)));
    await ctx.store.putSession(session("b".repeat(64)));
    await other.deleteSession("a".repeat(64));
    await other.deleteSession("c".repeat(64));
    assert.equal(await ctx.store.getSession("a".repeat(64), T), null);
    assert.deepEqual(await ctx.store.getSession("b".repeat(64), T), session("b".repeat(64)));
  });
}
