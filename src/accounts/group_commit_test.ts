import assert from "node:assert/strict";
import type { Store } from "../store/store.ts";
import type { CommitBatch } from "../store/types.ts";
import { GroupCommitter } from "./group_commit.ts";
import { Logger } from "../util/log.ts";

const QUIET = new Logger("error", () => {});

/** A store whose commits wait until the test releases (or fails) them, recording what each one wrote and
 *  every batch it was given (`attempts`, deep copies: a later change to a batch would show). */
function gatedStore() {
  const batches: CommitBatch[] = [];
  const attempts: CommitBatch[] = [];
  const gates: ((ok: boolean) => void)[] = [];
  let failNext = false;
  const store = {
    commit(batch: CommitBatch): Promise<void> {
      attempts.push(structuredClone(batch));
      if (failNext) {
        failNext = false;
        return Promise.reject(new Error("disk full"));
      }
      return new Promise<void>((resolve, reject) =>
        gates.push((ok) => ok ? (batches.push(batch), resolve()) : reject(new Error("connection lost")))
      );
    },
  } as unknown as Store;
  const next = async () => {
    for (let i = 0; i < 100 && gates.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    return gates.shift()!;
  };
  return {
    store,
    batches,
    attempts,
    failNextCommit: () => (failNext = true),
    /** Lets the oldest waiting commit finish, once one is waiting. */
    release: async () => (await next())(true),
    /** Makes the oldest waiting commit fail, once one is waiting (what it wrote may be durable or not). */
    fail: async () => (await next())(false),
  };
}

/** Batch ids b1, b2, … (GroupCommitter's injected id generator). */
function countedIds(): () => string {
  let n = 0;
  return () => `b${++n}`;
}

const ids = (b: CommitBatch) => b.money.map((d) => `${d.keyId}:${d.spent}`);

Deno.test("GroupCommitter commits changes queued behind a commit at once, not after another interval", async () => {
  const s = gatedStore();
  const gc = new GroupCommitter(s.store, 60_000, QUIET);
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

/**
 * A committer with `intervalMs` on a gated store and a clock the test moves: its first round (`a:1`) has
 * committed, `commitMs` after it started, with `b:2` queued behind it.
 */
async function afterFirstRound(intervalMs: number, commitMs: number) {
  const s = gatedStore();
  const clock = { ms: 0 };
  const gc = new GroupCommitter(s.store, intervalMs, QUIET, () => clock.ms);
  gc.money("a", 1n, 0n);
  const first = gc.flush();
  gc.money("b", 2n, 0n); // queued while the first commit is in flight
  clock.ms = commitMs;
  await s.release();
  await first;
  return { s, gc, clock };
}

Deno.test("GroupCommitter starts a round no sooner than 25 ms after the previous one started: the changes behind a quick commit go together", async () => {
  const { s, gc, clock } = await afterFirstRound(60_000, 1); // the first commit takes 1 ms
  gc.money("c", 3n, 0n);
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(s.attempts.length, 1, "the next round waits for the rest of the 25 ms");
  clock.ms = 2;
  gc.money("d", 4n, 0n);
  await s.release(); // the next round, once started
  await gc.flush();
  assert.deepEqual(s.batches.map(ids), [["a:1"], ["b:2", "c:3", "d:4"]]);
});

Deno.test("GroupCommitter under load: the 25 ms between rounds holds with the gateway's 5 ms interval, and a flush does not wait for it", async () => {
  // The first commit took longer than the interval, not 25 ms.
  const { s, gc } = await afterFirstRound(5, 6);
  await new Promise((r) => setTimeout(r, 10)); // longer than the interval
  assert.equal(s.attempts.length, 1, "the next round waits for the rest of the 25 ms, not the 5 ms interval");
  const flushed = gc.flush(); // a reader of the store: starts the round at once
  await s.release();
  await flushed;
  assert.deepEqual(s.batches.map(ids), [["a:1"], ["b:2"]]);
});

Deno.test("GroupCommitter draining: a change queued behind the commit in flight goes as it returns, without the 25 ms between rounds", async () => {
  const s = gatedStore();
  const gc = new GroupCommitter(s.store, 60_000, QUIET, () => 0);
  gc.money("a", 1n, 0n);
  const drained = gc.drain();
  gc.money("b", 2n, 0n); // queued while the drain's commit is in flight
  await s.release();
  await drained;
  await new Promise((r) => setTimeout(r, 5));
  assert.equal(s.attempts.length, 2, "the next round started at once");
  await s.release();
  await gc.flush();
  assert.deepEqual(s.batches.map(ids), [["a:1"], ["b:2"]]);
});

Deno.test("GroupCommitter.flush resolves only when every earlier change is durable", async () => {
  const s = gatedStore();
  const gc = new GroupCommitter(s.store, 60_000, QUIET);
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

Deno.test("GroupCommitter keeps a failed round's data and writes it again before newer changes", async () => {
  const s = gatedStore();
  const lines: string[] = [];
  const gc = new GroupCommitter(s.store, 60_000, new Logger("info", (line) => lines.push(line)));
  s.failNextCommit();
  gc.money("a", 1n, 0n);
  gc.usage({ requestId: "req_1" } as never);
  await gc.flush(); // returns on the failure
  assert.equal(gc.failures, 1);
  const { ts: _, ...logged } = JSON.parse(lines[0]!);
  assert.deepEqual(logged, {
    level: "error",
    msg: "group commit failed, retried unchanged",
    batch_id: s.attempts[0]!.id,
    keys: 1,
    rows: 1,
    error: "Error: disk full",
  });
  assert.equal(s.batches.length, 0);
  gc.money("b", 2n, 0n);
  const retry = gc.flush();
  await s.release();
  await s.release();
  await retry;
  assert.deepEqual(s.batches.map(ids), [["a:1"], ["b:2"]]);
  assert.equal(s.batches[0]!.usage.length, 1);
  assert.deepEqual(s.batches[0], s.attempts[0], "the failed batch, unchanged");
  assert.notEqual(s.batches[1]!.id, s.batches[0]!.id);
  assert.deepEqual([gc.stats().commits, gc.stats().rows], [2, 1]);
});

Deno.test("GroupCommitter retries the failed batch itself (same id and content) while newer changes wait", async () => {
  const s = gatedStore();
  const gc = new GroupCommitter(s.store, 60_000, QUIET, undefined, () => 1_000, countedIds());
  let open = [{ requestId: "req_open" }] as never[];
  void gc.drain(() => open, 60_000); // checkpoints are cut with a round; the ticker never fires here
  gc.money("a", 1n, 0n, { holder: "h", returned: 2n, reserved: 3n });
  gc.usage({ requestId: "req_1" } as never);
  const first = gc.flush();
  // Queued while b1 is in flight, and again while its retry is: none of it may join b1.
  gc.money("a", 10n, 0n);
  gc.money("c", 4n, 0n);
  gc.usage({ requestId: "req_2" } as never);
  open = [];
  gc.settled("req_open");
  await s.fail(); // b1 may have been written in part, or whole with the reply lost
  await first;
  assert.equal(gc.failures, 1);
  const retry = gc.flush();
  gc.money("c", 100n, 0n);
  await s.release();
  await s.release();
  await retry;
  const b1 = {
    id: "b1",
    money: [{ keyId: "a", spent: 1n, credited: 0n, lease: { holder: "h", returned: 2n, reserved: 3n } }],
    usage: [{ requestId: "req_1" }],
    open: [{ requestId: "req_open" }],
    closed: [],
    at: 1_000,
  };
  assert.deepEqual(s.attempts.slice(0, 2), [b1, b1], "b1 retried as it was, not merged with newer changes");
  assert.deepEqual(s.batches[0], b1);
  assert.deepEqual(s.batches[1], {
    id: "b2",
    money: [{ keyId: "a", spent: 10n, credited: 0n }, { keyId: "c", spent: 104n, credited: 0n }],
    usage: [{ requestId: "req_2" }],
    open: [],
    closed: ["req_open"],
    at: 1_000,
  });
  assert.equal(s.attempts.length, 3);
  assert.deepEqual([gc.stats().commits, gc.stats().rows, gc.stats().pendingMs], [2, 2, 0]);
  gc.stop();
});

Deno.test("GroupCommitter in drain mode commits each change without the interval", async () => {
  const s = gatedStore();
  const gc = new GroupCommitter(s.store, 60_000, QUIET);
  await gc.drain();
  gc.money("a", 1n, 0n);
  await s.release(); // a commit is waiting without anyone calling flush
  await gc.flush();
  assert.deepEqual(s.batches.map(ids), [["a:1"]]);
  assert.equal(gc.stats().commits, 1);
});

Deno.test("GroupCommitter while draining writes checkpoints on its ticker and deletes them once settled", async () => {
  const s = gatedStore();
  const gc = new GroupCommitter(s.store, 60_000, QUIET);
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

Deno.test("GroupCommitter sums a key's deltas into one per round, a failed round's kept as they were", async () => {
  const s = gatedStore();
  const gc = new GroupCommitter(s.store, 60_000, QUIET);
  s.failNextCommit();
  gc.money("a", 1n, 0n);
  gc.money("a", 2n, 10n);
  await gc.flush(); // fails: kept
  gc.money("a", 4n, 0n);
  gc.money("b", 8n, 0n);
  const retry = gc.flush();
  await s.release();
  await s.release();
  await retry;
  assert.deepEqual(s.batches.map((b) => b.money), [
    [{ keyId: "a", spent: 3n, credited: 10n }],
    [{ keyId: "a", spent: 4n, credited: 0n }, { keyId: "b", spent: 8n, credited: 0n }],
  ]);
});
