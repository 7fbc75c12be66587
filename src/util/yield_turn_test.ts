import assert from "node:assert/strict";
import { writeBatch, yieldTurn } from "./yield_turn.ts";

Deno.test("yieldTurn resolves with nothing else keeping the event loop alive, and many at once", async () => {
  // Without the ref'd interval Deno ends the test with "Promise resolution is still pending".
  await yieldTurn();
  const order: number[] = [];
  await Promise.all([1, 2, 3].map((n) => yieldTurn().then(() => order.push(n))));
  assert.deepEqual(order, [1, 2, 3]);
  await yieldTurn(); // the interval is unref'd again: the sanitizer sees no timer left running
});

Deno.test("writeBatch: the turn's first caller goes on at once, the later ones together at the turn's end", async () => {
  const order: string[] = [];
  const write = async (name: string) => {
    const batch = writeBatch();
    if (batch) await batch;
    order.push(name);
  };
  const first = [write("a"), write("b"), write("c")];
  // Work of the same turn that is queued after them: the batch's continuations come after it, not between.
  await Promise.resolve();
  order.push("turn's own work");
  await Promise.all(first);
  assert.deepEqual(order, ["a", "turn's own work", "b", "c"]);
  // The next turn opens a batch of its own: its first caller goes on at once again.
  assert.equal(writeBatch(), undefined);
  const second = writeBatch();
  assert.ok(second instanceof Promise);
  assert.equal(writeBatch(), second, "one batch per turn");
  await second;
  assert.equal(writeBatch(), undefined);
  await writeBatch(); // ends the batch the line above opened: the sanitizer sees nothing pending
});
