/**
 * The WriteGate (write_gate.ts): writes pass together, a snapshot runs alone — after the writes in flight, with
 * new ones held until it ends — snapshots one after another, and a failure of either releases the gate. Each
 * step is a deferred promise the test resolves, and `log` records what ran in which order. Last, the gate as
 * KvStore wires it (kv_store.ts): a store write waits for a snapshot.
 */
import assert from "node:assert/strict";
import { WriteGate } from "./write_gate.ts";
import { KvStore } from "./kv_store.ts";
import { keyRecord } from "./testing/test_fixtures.ts";

/** Lets every pending promise callback run (one macrotask turn). */
const settle = () => new Promise((r) => setTimeout(r, 0));

/** A step that logs its start, waits until released, logs its end and resolves with `value` (or rejects). */
function step(log: string[], name: string) {
  const gate = Promise.withResolvers<void>();
  let fail: Error | null = null;
  return {
    run: async () => {
      log.push(`${name} start`);
      await gate.promise;
      log.push(`${name} end`);
      if (fail) throw fail;
      return name;
    },
    release: () => gate.resolve(),
    failWith(err: Error) {
      fail = err;
      gate.resolve();
    },
  };
}

Deno.test("WriteGate: writes run together, none waiting for another", async () => {
  const gate = new WriteGate();
  const log: string[] = [];
  const [a, b] = [step(log, "a"), step(log, "b")];
  const done = [gate.write(a.run), gate.write(b.run)];
  await settle();
  assert.deepEqual(log, ["a start", "b start"]);
  b.release();
  assert.equal(await done[1], "b");
  a.release();
  assert.equal(await done[0], "a");
  assert.deepEqual(log, ["a start", "b start", "b end", "a end"]);
});

Deno.test("WriteGate: a snapshot waits for the writes in flight and holds new ones until it ends", async () => {
  const gate = new WriteGate();
  const log: string[] = [];
  const [w1, w2, snap, w3] = [step(log, "w1"), step(log, "w2"), step(log, "snapshot"), step(log, "w3")];
  const first = [gate.write(w1.run), gate.write(w2.run)];
  await settle();
  const snapshot = gate.snapshot(snap.run);
  await settle();
  const held = gate.write(w3.run);
  await settle();
  assert.deepEqual(log, ["w1 start", "w2 start"], "the snapshot waits; the write after it waits too");
  w1.release();
  await first[0];
  await settle();
  assert.deepEqual(log, ["w1 start", "w2 start", "w1 end"], "one write still in flight");
  w2.release();
  await first[1];
  await settle();
  assert.deepEqual(
    log.slice(3),
    ["w2 end", "snapshot start"],
    "the last write ended: the snapshot runs alone",
  );
  snap.release();
  assert.equal(await snapshot, "snapshot");
  await settle();
  assert.deepEqual(log.slice(5), ["snapshot end", "w3 start"], "the held write runs once the snapshot ended");
  w3.release();
  assert.equal(await held, "w3");
});

Deno.test("WriteGate: with no write in flight a snapshot runs at once; writes arriving meanwhile wait for its end", async () => {
  const gate = new WriteGate();
  const log: string[] = [];
  const [snap, w1, w2] = [step(log, "snapshot"), step(log, "w1"), step(log, "w2")];
  const snapshot = gate.snapshot(snap.run);
  const writes = [gate.write(w1.run), gate.write(w2.run)];
  await settle();
  assert.deepEqual(log, ["snapshot start"]);
  snap.release();
  await snapshot;
  await settle();
  assert.deepEqual(log, ["snapshot start", "snapshot end", "w1 start", "w2 start"], "released together");
  w1.release();
  w2.release();
  assert.deepEqual(await Promise.all(writes), ["w1", "w2"]);
});

Deno.test("WriteGate: two snapshots run one after the other, never together", async () => {
  const gate = new WriteGate();
  const log: string[] = [];
  const [s1, s2] = [step(log, "s1"), step(log, "s2")];
  const both = [gate.snapshot(s1.run), gate.snapshot(s2.run)];
  await settle();
  assert.deepEqual(log, ["s1 start"]);
  s2.release(); // released early: it must still wait for s1
  await settle();
  assert.deepEqual(log, ["s1 start"]);
  s1.release();
  assert.deepEqual(await Promise.all(both), ["s1", "s2"]);
  assert.deepEqual(log, ["s1 start", "s1 end", "s2 start", "s2 end"]);
});

Deno.test("WriteGate: a failing write still lets the waiting snapshot run; a failing snapshot releases the held writes", async () => {
  const gate = new WriteGate();
  const log: string[] = [];
  const [w1, s1, w2, s2] = [step(log, "w1"), step(log, "s1"), step(log, "w2"), step(log, "s2")];
  const write = gate.write(w1.run);
  await settle();
  const snapshot = gate.snapshot(s1.run);
  const held = gate.write(w2.run);
  await settle();
  w1.failWith(new Error("write failed"));
  await assert.rejects(write, /write failed/);
  await settle();
  assert.deepEqual(log, ["w1 start", "w1 end", "s1 start"]);
  s1.failWith(new Error("snapshot failed"));
  await assert.rejects(snapshot, /snapshot failed/);
  await settle();
  assert.deepEqual(log.slice(3), ["s1 end", "w2 start"]);
  w2.release();
  assert.equal(await held, "w2");
  // The gate is whole again: another snapshot runs at once, with nothing in flight.
  const next = gate.snapshot(s2.run);
  await settle();
  assert.equal(log.at(-1), "s2 start");
  s2.release();
  assert.equal(await next, "s2");
});

Deno.test("WriteGate.guard: the named methods go through the gate; a name that is not a method is refused", async () => {
  const gate = new WriteGate();
  const log: string[] = [];
  const w = step(log, "put");
  const target = {
    put: (x: number) => w.run().then(() => x * 2),
    read: () => Promise.resolve(log.push("read")),
  };
  gate.guard(target, ["put"]);
  const s = step(log, "snapshot");
  const snapshot = gate.snapshot(s.run);
  const put = target.put(21);
  await target.read();
  await settle();
  assert.deepEqual(log, ["snapshot start", "read"], "the guarded write waits, the unguarded read does not");
  s.release();
  await snapshot;
  w.release();
  assert.equal(await put, 42);
  assert.deepEqual(log, ["snapshot start", "read", "snapshot end", "put start", "put end"]);
  assert.throws(() => gate.guard(target, ["missing"]), { message: "write gate: no method missing" });
});

Deno.test("KvStore: a key created while a snapshot is read waits for its end; the snapshot's reads do not wait", async () => {
  const store = await KvStore.open(":memory:");
  try {
    const inside = Promise.withResolvers<void>();
    const seen: string[][] = [];
    const snapshot = store.readSnapshot(async (view) => {
      seen.push((await view.listKeys()).map((k) => k.id));
      await inside.promise;
      seen.push((await view.listKeys()).map((k) => k.id));
    });
    await settle();
    let created = false;
    const create = store.createKey(keyRecord("key_a")).then(() => created = true);
    await settle();
    assert.equal(created, false, "held by the snapshot");
    assert.equal(await store.getKey("key_a"), null);
    inside.resolve();
    await snapshot;
    await create;
    assert.deepEqual(seen, [[], []], "one moment: the key is in neither read");
    assert.equal((await store.getKey("key_a"))?.id, "key_a");
  } finally {
    await store.close();
  }
});
