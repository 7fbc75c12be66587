/**
 * One coarse timer for many deadlines. A per-request or per-frame setTimeout costs more than the
 * work it guards on the hot path; a shared interval that scans the registered callbacks does not.
 * Precision is one period (the smallest period any registrant asked for, at least 10 ms).
 */
type Tick = (now: number) => void;

const ticks = new Set<Tick>();
let period = Infinity;
let timer: ReturnType<typeof setInterval> | undefined;

/** No registrant left: the interval ends (at its next tick, so back-to-back requests do not re-arm it). */
function stop(): void {
  clearInterval(timer);
  timer = undefined;
  period = Infinity;
}

function restart(): void {
  if (timer !== undefined) clearInterval(timer);
  timer = setInterval(() => {
    if (ticks.size === 0) return stop();
    const now = Date.now();
    for (const t of ticks) t(now);
  }, period);
  // Deno 2.9's global timers are Node-style objects; do not keep the process alive for them.
  (timer as unknown as { unref?: () => void }).unref?.();
}

/** Calls `tick` about every `everyMs` until the returned function is called. */
export function onTick(everyMs: number, tick: Tick): () => void {
  ticks.add(tick);
  const wanted = Math.max(10, Math.floor(everyMs));
  if (wanted < period || timer === undefined) {
    period = Math.min(period, wanted);
    restart();
  }
  return () => {
    ticks.delete(tick);
  };
}

/** Runs `fn` once, about `ms` from now, unless the returned function is called first. */
export function deadline(ms: number, fn: () => void): () => void {
  const at = Date.now() + ms;
  const stop = onTick(Math.min(ms, 1_000), (now) => {
    if (now >= at) {
      stop();
      fn();
    }
  });
  return stop;
}
