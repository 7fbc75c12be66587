/**
 * Closed-loop load generator on fetch (keep-alive): `concurrency` async loops, each sending its next
 * request as soon as the previous one finished, for a warm-up and then a measured window.
 */

export interface Sample {
  /** ms from sending the request to the end of the body. */
  total: number;
  /** ms from sending the request to the first body chunk. */
  ttfb: number;
  bytes: number;
  /** Body chunks the client's reader returned. */
  chunks: number;
}

export interface LoadResult {
  requests: number;
  /** Every request that completed, warm-up and stragglers included (for CPU per request). */
  completed: number;
  /** Wall time of the whole run, warm-up included, ms. */
  wallMs: number;
  errors: number;
  seconds: number;
  rps: number;
  /** Sorted total latencies, ms. */
  latency: Float64Array;
  /** Sorted first-chunk latencies, ms. */
  ttfb: Float64Array;
  bytes: number;
  chunks: number;
  firstError?: string;
}

export interface LoadOptions {
  url: string;
  headers: Record<string, string>;
  body: string;
  concurrency: number;
  warmupSeconds: number;
  seconds: number;
}

/** One request; reads the whole body chunk by chunk. Throws on a non-200 status. */
export async function timedRequest(
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<Sample> {
  const t0 = performance.now();
  const res = await fetch(url, { method: "POST", headers, body });
  if (res.status !== 200) {
    const text = await res.text();
    throw new Error(`HTTP ${res.status}: ${text.slice(0, 300)}`);
  }
  let ttfb = -1;
  let bytes = 0, chunks = 0;
  const reader = res.body!.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (ttfb < 0) ttfb = performance.now() - t0;
    bytes += value.byteLength;
    chunks++;
  }
  const total = performance.now() - t0;
  return { total, ttfb: ttfb < 0 ? total : ttfb, bytes, chunks };
}

export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const start = performance.now();
  const measureFrom = start + o.warmupSeconds * 1000;
  const end = measureFrom + o.seconds * 1000;
  const totals: number[] = [];
  const ttfbs: number[] = [];
  let bytes = 0, chunks = 0;
  let errors = 0;
  let completed = 0;
  let firstError: string | undefined;
  const loop = async () => {
    for (;;) {
      const t0 = performance.now();
      if (t0 >= end) return;
      try {
        const s = await timedRequest(o.url, o.headers, o.body);
        completed++;
        // Count a request in the window it was started in and finished by the end.
        if (t0 >= measureFrom && t0 + s.total <= end) {
          totals.push(s.total);
          ttfbs.push(s.ttfb);
          bytes += s.bytes;
          chunks += s.chunks;
        }
      } catch (err) {
        errors++;
        firstError ??= String(err);
        if (errors > 1000) return;
      }
    }
  };
  await Promise.all(Array.from({ length: o.concurrency }, loop));
  return {
    requests: totals.length,
    completed,
    wallMs: performance.now() - start,
    errors,
    seconds: o.seconds,
    rps: totals.length / o.seconds,
    latency: Float64Array.from(totals).sort(),
    ttfb: Float64Array.from(ttfbs).sort(),
    bytes,
    chunks,
    ...(firstError ? { firstError } : {}),
  };
}

/** Nearest-rank percentile of sorted values (p in 0..100). */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export interface HoldResult {
  /** Streams that delivered their first chunk. */
  opened: number;
  /** Most streams open (first chunk seen, end not yet) at one moment. */
  peakOpen: number;
  completed: number;
  errors: number;
  firstError?: string;
  /** ms from the first request to the moment all `opened` streams were open. */
  rampMs: number;
}

/**
 * Opens `n` streams at once and reads each to the end. `onAllOpen` runs once every stream has
 * delivered a first chunk while none has ended yet (or never, if that did not happen).
 */
export async function holdStreams(
  n: number,
  url: string,
  headers: Record<string, string>,
  body: string,
  onAllOpen: () => Promise<void>,
): Promise<HoldResult> {
  let open = 0, peak = 0, opened = 0, completed = 0, errors = 0;
  let firstError: string | undefined;
  let rampMs = NaN;
  const t0 = performance.now();
  let resolveAll!: () => void;
  const allOpen = new Promise<void>((r) => resolveAll = r);
  const one = async () => {
    let counted = false;
    try {
      const res = await fetch(url, { method: "POST", headers, body });
      if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${(await res.text()).slice(0, 300)}`);
      const reader = res.body!.getReader();
      for (;;) {
        const { done } = await reader.read();
        if (done) break;
        if (!counted) {
          counted = true;
          opened++;
          peak = Math.max(peak, ++open);
          if (peak === n) {
            rampMs = performance.now() - t0;
            resolveAll();
          }
        }
      }
      completed++;
    } catch (err) {
      errors++;
      firstError ??= String(err);
    } finally {
      if (counted) open--;
    }
  };
  const all = Promise.all(Array.from({ length: n }, one));
  const probe = Promise.race([allOpen.then(onAllOpen), all]);
  await all;
  await probe;
  return { opened, peakOpen: peak, completed, errors, rampMs, ...(firstError ? { firstError } : {}) };
}

/**
 * Runs of one load as one: counts and wall time summed, the latencies of every run together (percentiles over
 * all the samples), rps over the summed measured windows.
 */
export function pooledLoads(runs: readonly LoadResult[]): LoadResult {
  if (runs.length === 0) throw new RangeError("no runs");
  const sum = (f: (r: LoadResult) => number) => runs.reduce((n, r) => n + f(r), 0);
  const pool = (f: (r: LoadResult) => Float64Array) =>
    Float64Array.from(runs.flatMap((r) => [...f(r)])).sort();
  const requests = sum((r) => r.requests), seconds = sum((r) => r.seconds);
  const firstError = runs.find((r) => r.firstError !== undefined)?.firstError;
  return {
    requests,
    completed: sum((r) => r.completed),
    wallMs: sum((r) => r.wallMs),
    errors: sum((r) => r.errors),
    seconds,
    rps: seconds > 0 ? requests / seconds : 0,
    latency: pool((r) => r.latency),
    ttfb: pool((r) => r.ttfb),
    bytes: sum((r) => r.bytes),
    chunks: sum((r) => r.chunks),
    ...firstError !== undefined ? { firstError } : {},
  };
}
