import assert from "node:assert/strict";
import { InFlight } from "./in_flight.ts";

const REASON = new Error("shutting down");

Deno.test("InFlight.drain with nothing in flight returns at once and aborts the signal (nothing new may start)", async () => {
  const f = new InFlight();
  assert.deepEqual(await f.drain(60_000, REASON, 60_000), { cut: 0, left: 0 });
  assert.equal(f.signal.aborted, true);
  assert.equal(f.signal.reason, REASON);
});

Deno.test("InFlight.drain waits for the work in flight to end within the grace; nothing is cut", async () => {
  const f = new InFlight();
  const a = f.enter();
  const b = f.enter();
  assert.equal(f.count, 2);
  const draining = f.drain(60_000, REASON, 60_000);
  a();
  a(); // leaving twice counts once
  assert.equal(f.count, 1);
  assert.equal(f.signal.aborted, false, "not cut during the grace");
  queueMicrotask(b);
  assert.deepEqual(await draining, { cut: 0, left: 0 });
});

Deno.test("InFlight.drain past the grace cuts what is left: the signal's listeners end it", async () => {
  const f = new InFlight();
  const leave = f.enter();
  let reason: unknown;
  f.signal.addEventListener("abort", () => {
    reason = f.signal.reason;
    leave(); // a stream ends with its error frame and settles, synchronously
  });
  assert.deepEqual(await f.drain(0, REASON, 60_000), { cut: 1, left: 0 });
  assert.equal(reason, REASON);
});

Deno.test("InFlight.drain reports what ignored the cut, after the cut's own bound", async () => {
  const f = new InFlight();
  f.enter();
  assert.deepEqual(await f.drain(0, REASON, 0), { cut: 1, left: 1 });
});

Deno.test("InFlight.hurry ends the grace now (a second shutdown signal)", async () => {
  const f = new InFlight();
  const leave = f.enter();
  f.signal.addEventListener("abort", leave);
  const draining = f.drain(3_600_000, REASON, 3_600_000);
  f.hurry();
  assert.deepEqual(await draining, { cut: 1, left: 0 });
});

Deno.test("InFlight.onCut: told once, in order, when the cut comes (the signal aborted with its reason); offCut: not told", async () => {
  const f = new InFlight();
  const leave = f.enter();
  const told: unknown[] = [];
  const first = f.onCut(() => told.push("taken back, first"));
  f.onCut(() => told.push(f.signal.reason));
  const middle = f.onCut(() => told.push("taken back, middle"));
  f.onCut(leave);
  const last = f.onCut(() => told.push("taken back, last"));
  f.offCut(middle);
  f.offCut(first);
  f.offCut(last);
  f.offCut(middle); // twice: nothing
  f.onCut(() => told.push("after"));
  const draining = f.drain(3_600_000, REASON, 3_600_000);
  assert.deepEqual(told, [], "not during the grace");
  f.hurry();
  assert.deepEqual(await draining, { cut: 1, left: 0 });
  assert.deepEqual(told, [REASON, "after"], "in the order registered");
  await f.drain(0, new Error("again"), 0);
  assert.deepEqual(told, [REASON, "after"], "a second drain tells nobody again");
});

Deno.test("InFlight.onCut after the cut calls at once", async () => {
  const f = new InFlight();
  await f.drain(0, REASON, 0);
  let reason: unknown;
  f.onCut(() => reason = f.signal.reason);
  assert.equal(reason, REASON);
});

Deno.test("InFlight: one told of the cut that throws does not keep the others from being told; drain rejects with it", async () => {
  const f = new InFlight();
  const told: string[] = [];
  const broken = new Error("broken");
  f.onCut(() => told.push("a"));
  f.onCut(() => {
    throw broken;
  });
  f.onCut(() => told.push("c"));
  await assert.rejects(f.drain(0, REASON, 0), broken);
  assert.deepEqual(told, ["a", "c"]);
});
