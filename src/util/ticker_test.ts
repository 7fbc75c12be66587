/** The shared ticker (ticker.ts): deadlines fire once, never after their cancel, and may set new ones. */
import assert from "node:assert/strict";
import { deadline, onTick, stopTicking } from "./ticker.ts";

/** The ticker's interval is unref'd (a real server keeps the process alive); here a test timer does. */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("deadline: fires once, not before its time; a cancelled one never fires", async () => {
  const fired: string[] = [];
  const setAt = Date.now();
  let firedAt = 0;
  deadline(30, () => {
    fired.push("a");
    firedAt = Date.now();
  });
  const cancel = deadline(30, () => fired.push("cancelled"));
  const early = deadline(5, () => fired.push("early"));
  cancel();
  await sleep(120);
  early(); // after it fired: nothing happens
  assert.deepEqual(fired.sort(), ["a", "early"]);
  assert.ok(firedAt - setAt >= 30, "not before its time");
});

Deno.test("deadline: one set by a firing deadline, and many at once, each fire once", async () => {
  const fired: number[] = [];
  deadline(10, () => deadline(10, () => fired.push(-1)));
  const cancels = Array.from({ length: 500 }, (_, i) => deadline(10 + (i % 20), () => fired.push(i)));
  for (let i = 0; i < 500; i += 2) cancels[i]!();
  await sleep(150);
  assert.deepEqual(
    fired.filter((i) => i >= 0).sort((a, b) => a - b),
    Array.from({ length: 250 }, (_, i) => 2 * i + 1),
  );
  assert.equal(fired.filter((i) => i === -1).length, 1);
});

Deno.test("onTick: ticks beside deadlines until stopped", async () => {
  let n = 0;
  const t = onTick(10, () => n++);
  const cancel = deadline(1_000, () => {});
  await sleep(80);
  stopTicking(t);
  cancel();
  const seen = n;
  assert.ok(seen > 0);
  await sleep(40);
  assert.equal(n, seen, "no tick after its stop");
});
