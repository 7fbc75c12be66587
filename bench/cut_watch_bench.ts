/**
 * What telling the work in flight of a shutdown's cut costs per request as more streams stay open: every
 * request registers (and on its answer unregisters) to be told, and every open stream stays registered until
 * it ends. Listeners on one AbortSignal against InFlight's `onCut`/`offCut` (src/util/in_flight.ts), with
 * 0, 1,000 and 10,000 others registered (open streams); in-process, best of 3 rounds, µs per register and
 * unregister. `deno run bench/cut_watch_bench.ts`.
 */
import { InFlight } from "../src/util/in_flight.ts";

const CALLS = 2_000;

/** A way to be told: registers `fn`, returns what takes it back. */
type Register = (fn: () => void) => () => void;

/** Best of 3 rounds: µs to register and then unregister a callback while `open` others stay registered. */
function usPerPair(open: number, register: Register): number {
  const stay = Array.from({ length: open }, () => register(() => {}));
  const calls = Array.from({ length: CALLS }, () => () => {});
  let best = Infinity;
  for (let round = 0; round < 4; round++) { // the first round warms up
    const t0 = performance.now();
    for (const fn of calls) register(fn)();
    if (round > 0) best = Math.min(best, (performance.now() - t0) * 1000 / CALLS);
  }
  for (const takeBack of stay) takeBack();
  return best;
}

if (import.meta.main) {
  console.log("| Open streams registered | AbortSignal listener: add + remove | InFlight onCut + offCut |");
  console.log("| ---: | ---: | ---: |");
  for (const open of [0, 1_000, 10_000]) {
    const signal = new AbortController().signal;
    const listeners = usPerPair(open, (fn) => {
      signal.addEventListener("abort", fn);
      return () => signal.removeEventListener("abort", fn);
    });
    const f = new InFlight();
    const watch = usPerPair(open, (fn) => {
      const w = f.onCut(fn);
      return () => f.offCut(w);
    });
    console.log(`| ${open.toLocaleString("en")} | ${listeners.toFixed(2)} µs | ${watch.toFixed(2)} µs |`);
  }
}
