import assert from "node:assert/strict";
import { yieldTurn } from "./yield_turn.ts";

Deno.test("yieldTurn resolves with nothing else keeping the event loop alive, and many at once", async () => {
  // Without the ref'd interval Deno ends the test with "Promise resolution is still pending".
  await yieldTurn();
  const order: number[] = [];
  await Promise.all([1, 2, 3].map((n) => yieldTurn().then(() => order.push(n))));
  assert.deepEqual(order, [1, 2, 3]);
  await yieldTurn(); // the interval is unref'd again: the sanitizer sees no timer left running
});
