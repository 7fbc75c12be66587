/** The store's tool-loop capability on Deno KV: per key, expiry by the caller's clock, one atomic change, a reopen. */
import assert from "node:assert/strict";
import { KvStore } from "./kv_store.ts";
import type { ToolLoop } from "./store.ts";

const loop = (keyId: string, id: string, updatedAt: number, ttl = 1_000): ToolLoop => ({
  keyId,
  id,
  callIds: [`call_${id}`],
  updatedAt,
  expiresAt: updatedAt + ttl,
});

Deno.test("kv tool loops: listed per key, first to expire first, expired ones left out", async () => {
  const store = await KvStore.open(":memory:");
  try {
    await store.updateToolLoops("k1", { close: [], open: loop("k1", "b", 200) });
    await store.updateToolLoops("k1", { close: [], open: loop("k1", "a", 100) });
    await store.updateToolLoops("k2", { close: [], open: loop("k2", "c", 100) });
    assert.deepEqual((await store.listToolLoops("k1", 150)).map((l) => l.id), ["a", "b"]);
    assert.deepEqual((await store.listToolLoops("k1", 1_100)).map((l) => l.id), ["b"]);
    assert.deepEqual((await store.listToolLoops("k1", 1_200)).map((l) => l.id), []);
    assert.deepEqual((await store.listToolLoops("k2", 150)).map((l) => l.id), ["c"]);
  } finally {
    store.close();
  }
});

Deno.test("kv tool loops: one change closes some and renews another; a loop both closed and written stays", async () => {
  const store = await KvStore.open(":memory:");
  try {
    for (const id of ["a", "b", "c"]) await store.updateToolLoops("k", { close: [], open: loop("k", id, 0) });
    const renewed = { ...loop("k", "a", 500), callIds: ["call_next"] };
    await store.updateToolLoops("k", { close: ["a", "b"], open: renewed });
    assert.deepEqual(await store.listToolLoops("k", 600), [loop("k", "c", 0), renewed]);
    await store.updateToolLoops("k", { close: ["a", "nothing"] });
    assert.deepEqual(await store.listToolLoops("k", 600), [loop("k", "c", 0)]);
  } finally {
    store.close();
  }
});

Deno.test("kv tool loops: kept in the KV file across a reopen", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tool_loops_" });
  try {
    const now = Date.now();
    let store = await KvStore.open(`${dir}/gateway.kv`);
    await store.updateToolLoops("k", { close: [], open: loop("k", "a", now, 60_000) });
    store.close();
    store = await KvStore.open(`${dir}/gateway.kv`);
    assert.deepEqual((await store.listToolLoops("k", now)).map((l) => l.callIds), [["call_a"]]);
    store.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
