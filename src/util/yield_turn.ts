/**
 * One turn of the runtime's event loop, without waiting for a timer.
 *
 * While upstream reads complete at once (a burst already in the socket), the stream's JavaScript runs from
 * read to read, and Deno's HTTP task, which writes the answer to the client, runs only once it is all done:
 * the first frame waits for the whole burst. A timer lets that task run, but Deno 2.9's timers have
 * millisecond resolution (`setTimeout(0)` waits 1–2 ms), and `setImmediate` and promise jobs run before it.
 * A settled `Atomics.waitAsync` resolves from a V8 task, which Deno runs on its next loop turn, after its I/O
 * tasks (a `MessageChannel` message does too, for ≈10 µs, but its port keeps a receive pending).
 * docs/performance.md, "Stream TTFB at c=1".
 *
 * Deno does not count a pending V8 task as work that keeps the process running: while a turn is awaited, an
 * otherwise idle interval timer is ref'd so that the loop goes on (`Deno.refTimer`, ≈0.1 µs; a timer per turn
 * would cost ≈1.7 µs more).
 */
const cell = new Int32Array(new SharedArrayBuffer(4));

type WaitAsync = (
  a: Int32Array,
  i: number,
  v: number,
) => { async: boolean; value: Promise<unknown> | string };
const waitAsync = (Atomics as unknown as { waitAsync?: WaitAsync }).waitAsync;

const keepAlive = setInterval(() => {}, 2 ** 30);
Deno.unrefTimer(keepAlive);
let waiting = 0;

export async function yieldTurn(): Promise<void> {
  if (!waitAsync) return;
  const wait = waitAsync(cell, 0, 0); // `cell` stays 0: always a real wait, woken at once below
  Atomics.notify(cell, 0);
  if (!wait.async) return;
  if (waiting++ === 0) Deno.refTimer(keepAlive);
  try {
    await wait.value;
  } finally {
    if (--waiting === 0) Deno.unrefTimer(keepAlive);
  }
}

let batch: Promise<void> | undefined;
/** The turn's first caller went on: the turn has a batch, whose end may not be awaited yet. */
let opened = false;
const closeBatch = () => {
  batch = undefined;
  opened = false;
};
const awaitBatch = () => {
  batch ??= yieldTurn().then(closeBatch);
};

/**
 * Writes batched to the end of a loop turn: the first caller of a turn goes on at once (undefined) and opens
 * the turn's batch; later callers of the same turn get a promise of its end, and their continuations then run
 * one after the other, with none of the turn's other work between them. The upstream client writes its
 * requests so: a write to a loopback peer that has gone to sleep pays for waking it inside the call (a
 * cross-CPU wake-up, ≈10–30 µs on a VM), and writes spread over a turn's work each find it asleep; a lone
 * request waits for nothing (docs/performance.md "Upstream writes at the turn's end"). The first caller does
 * not wait for the turn's end to be set up either (≈5 µs at one connection): a microtask does it, after the
 * caller's write.
 */
export function writeBatch(): Promise<void> | undefined {
  if (opened) {
    awaitBatch();
    return batch;
  }
  opened = true;
  queueMicrotask(awaitBatch);
  return undefined;
}
