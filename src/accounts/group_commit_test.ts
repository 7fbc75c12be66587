import assert from "node:assert/strict";
import type { Store } from "../store/store.ts";
import type { CommitBatch } from "../store/types.ts";
import { GroupCommitter } from "./group_commit.ts";

/** A store whose commits wait until the test releases them, recording what each one wrote. */
function gatedStore() {
  const batches: CommitBatch[] = [];
  const gates: (() => void)[] = [];
  let failNext = false;
  const store = {
    commit(batch: CommitBatch): Promise<void> {
      if (failNext) {
        failNext = false;
        return Promise.reject(new Error("disk full"));
      }
      return new Promise<void>((resolve) => gates.push(() => (batches.push(batch), resolve())));
    },
  } as unknown as Store;
  return {
    store,
    batches,
    failNextCommit: () => (failNext = true),
    /** Lets the oldest waiting commit finish, once one is waiting. */
    async release() {
      for (let i = 0; i < 100 && gates.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
      gates.shift()!();
    },
  };
}

const ids = (b: CommitBatch) => b.money.map((d) => `${d.keyId}:${d.spent}`);

Deno.test("GroupCommitter commits changes queued behind a commit at once, not after another interval", async () => {
  const s = gatedStore();
  const gc = new GroupCommitter(s.store, 60_000);
  gc.money("a", 1n, 0n);
  const first = gc.flush();
  gc.money("b", 2n, 0n); // queued while the first commit is in flight
  await s.release();
  await first;
  await s.release(); // would wait a whole minute if the next round waited for the interval
  await gc.flush();
  assert.deepEqual(s.batches.map(ids), [["a:1"], ["b:2"]]);
  assert.equal(gc.stats().commits, 2);
});

Deno.test("GroupCommitter.flush resolves only when every earlier change is durable", async () => {
  const s = gatedStore();
  const gc = new GroupCommitter(s.store, 60_000);
  gc.money("a", 1n, 0n);
  const first = gc.flush();
  gc.money("b", 2n, 0n);
  let secondDone = false;
  const second = gc.flush().then(() => (secondDone = true));
  await s.release();
  await first;
  assert.equal(secondDone, false, "b is not durable yet");
  await s.release();
  await second;
  assert.deepEqual(s.batches.flatMap(ids), ["a:1", "b:2"]);
});

Deno.test("GroupCommitter keeps a failed round's data and writes it with the next one", async () => {
  const s = gatedStore();
  const gc = new GroupCommitter(s.store, 60_000);
  s.failNextCommit();
  gc.money("a", 1n, 0n);
  gc.usage({ requestId: "req_1" } as never);
  await gc.flush(); // returns on the failure
  assert.equal(gc.failures, 1);
  assert.equal(s.batches.length, 0);
  gc.money("b", 2n, 0n);
  const retry = gc.flush();
  await s.release();
  await retry;
  assert.deepEqual(ids(s.batches[0]!).sort(), ["a:1", "b:2"]);
  assert.equal(s.batches[0]!.usage.length, 1);
});

Deno.test("GroupCommitter in drain mode commits each change without the interval", async () => {
  const s = gatedStore();
  const gc = new GroupCommitter(s.store, 60_000);
  await gc.drain();
  gc.money("a", 1n, 0n);
  await s.release(); // a commit is waiting without anyone calling flush
  await gc.flush();
  assert.deepEqual(s.batches.map(ids), [["a:1"]]);
  assert.equal(gc.stats().commits, 1);
});

Deno.test("GroupCommitter while draining writes checkpoints on its ticker and deletes them once settled", async () => {
  const s = gatedStore();
  const gc = new GroupCommitter(s.store, 60_000);
  let open = [{ requestId: "req_open" }] as never[];
  void gc.drain(() => open, 10);
  await s.release(); // the ticker forces a round though nothing else is pending
  assert.deepEqual(s.batches[0]!.open!.map((r: { requestId: string }) => r.requestId), ["req_open"]);
  open = [];
  gc.settled("req_open");
  gc.settled("req_never_checkpointed");
  gc.usage({ requestId: "req_open" } as never);
  await s.release();
  await gc.flush();
  gc.stop();
  assert.deepEqual(s.batches[1]!.closed, ["req_open"]);
  assert.deepEqual(s.batches[1]!.open, []);
});

Deno.test("GroupCommitter sums a key's deltas into one per round, and a failed round's into the next", async () => {
  const s = gatedStore();
  const gc = new GroupCommitter(s.store, 60_000);
  s.failNextCommit();
  gc.money("a", 1n, 0n);
  gc.money("a", 2n, 10n);
  await gc.flush(); // fails: kept
  gc.money("a", 4n, 0n);
  gc.money("b", 8n, 0n);
  const retry = gc.flush();
  await s.release();
  await retry;
  assert.deepEqual(s.batches[0]!.money, [
    { keyId: "a", spent: 7n, credited: 10n },
    { keyId: "b", spent: 8n, credited: 0n },
  ]);
});
