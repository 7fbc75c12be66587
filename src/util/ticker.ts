/**
 * One coarse timer for many deadlines. A per-request or per-frame setTimeout costs more than the
 * work it guards on the hot path; a shared interval that scans the registered callbacks does not.
 * Precision is one period (the smallest period any registrant asked for, at least 10 ms).
 */
import { EntryList, type ListEntry } from "./entry_list.ts";

type Tick = (now: number) => void;

/** The registrants of `onTick`, in the order registered (an EntryList: streams register and leave). */
const ticks = new EntryList<Tick>();
let period = Infinity;
let timer: ReturnType<typeof setInterval> | undefined;

/**
 * The pending `deadline`s, in the order they were set. A request sets one or two and cancels them within
 * milliseconds, so a deadline is a plain record that its cancel empties, dropped by the next sweep: adding a
 * closure to `ticks` and deleting it again cost ~10 µs of CPU per request on the JSON path (garbage
 * collection included; docs/performance.md). A cancelled record lets go of its callback at once:
 * whatever that holds (a request's body) is not kept alive until the sweep.
 */
interface Due {
  at: number;
  /** Undefined once fired or cancelled. */
  fn: (() => void) | undefined;
}
const dues: Due[] = [];
/** Dues are swept at least this often, so the cancelled ones are dropped while still young. */
const SWEEP_MS = 10;

/** No registrant left: the interval ends (at its next tick, so back-to-back requests do not re-arm it). */
function stop(): void {
  clearInterval(timer);
  timer = undefined;
  period = Infinity;
}

function restart(): void {
  if (timer !== undefined) clearInterval(timer);
  timer = setInterval(() => {
    if (ticks.size === 0 && dues.length === 0) return stop();
    const now = Date.now();
    if (dues.length > 0) sweep(now);
    ticks.forEach((t) => t(now));
  }, period);
  // Deno 2.9's global timers are Node-style objects; do not keep the process alive for them.
  (timer as unknown as { unref?: () => void }).unref?.();
}

/** Arms the interval for a registrant that wants a tick about every `everyMs`. */
function want(everyMs: number): void {
  const wanted = Math.max(10, Math.floor(everyMs));
  if (wanted < period || timer === undefined) {
    period = Math.min(period, wanted);
    restart();
  }
}

/** Drops the cancelled dues and runs the ones that are due (after the sweep: they may set new ones). */
function sweep(now: number): void {
  const fired: (() => void)[] = [];
  let kept = 0;
  for (let i = 0; i < dues.length; i++) {
    const d = dues[i]!;
    if (d.fn === undefined) continue;
    if (now >= d.at) {
      fired.push(d.fn);
      d.fn = undefined;
    } else dues[kept++] = d;
  }
  dues.length = kept;
  for (const fn of fired) fn();
}

/** One `onTick` registrant (`stopTicking` ends it). */
export type Ticking = ListEntry<Tick>;

/** Calls `tick` about every `everyMs` until `stopTicking` is given the entry returned. */
export function onTick(everyMs: number, tick: Tick): Ticking {
  const t = ticks.add(tick);
  want(everyMs);
  return t;
}

/** No more ticks for `t` (nothing if it was stopped already). */
export function stopTicking(t: Ticking): void {
  ticks.remove(t);
}

/** Runs `fn` once, about `ms` from now, unless the returned function is called first. */
export function deadline(ms: number, fn: () => void): () => void {
  const d: Due = { at: Date.now() + ms, fn };
  dues.push(d);
  want(Math.min(ms, SWEEP_MS));
  return () => {
    d.fn = undefined;
  };
}
