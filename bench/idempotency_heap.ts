/**
 * The heap of N streams held open through one gateway, with or without an Idempotency-Key each: the simulator,
 * the gateway and the client in this one process (run it with `--v8-flags=--expose-gc`), so `heapUsed` after a
 * full collection counts everything a stream holds. bench/idempotency_bench.ts runs it once per mode in a fresh
 * process and takes the difference; alone:
 *
 *   deno run -A --unstable-kv --unstable-no-legacy-abort --v8-flags=--expose-gc bench/idempotency_heap.ts keyed 100
 *
 * Prints one JSON line: the heap before and with the streams open, the bytes the keyed runs keep, the RSS.
 */
import { startSimulator } from "../sim/server.ts";
import { parseConfig } from "../src/config/env.ts";
import { startGateway } from "../src/gateway.ts";
import { ADMIN_TOKEN, createKey } from "./procs.ts";
import { chat, PATH } from "./scenarios.ts";

export interface HeapResult {
  mode: "keyed" | "unkeyed";
  streams: number;
  /** heapUsed after a full collection, bytes: before the streams, and with all of them open. */
  idleHeap: number;
  openHeap: number;
  /** What the keyed runs kept for replay at that moment, bytes (0 unkeyed). */
  keptBytes: number;
  keyedRuns: number;
  /** Body bytes each stream's client had received at that moment, mean. */
  receivedPerStream: number;
  idleRss: number;
  openRss: number;
}

/** Frames 250 ms apart, long enough to be open throughout; every stream is read as it comes. */
const STREAM = chat("[[sim:interval=250]][[sim:words=4000]] Keep talking slowly.", true);
/** How long the streams run, all open, before the heap is measured. */
const OPEN_MS = 2_000;

const gc = (globalThis as { gc?: () => void }).gc;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function heapNow(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc!();
    await sleep(20);
  }
  return Deno.memoryUsage().heapUsed;
}

async function measure(mode: HeapResult["mode"], n: number): Promise<HeapResult> {
  const sim = await startSimulator();
  const gw = await startGateway(parseConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    DATABASE_URL: "memory",
    ADMIN_TOKEN,
    ALPHA_UPSTREAM_URL: sim.url,
    ALPHA_UPSTREAM_KEY: "up-alpha",
    MAX_INFLIGHT_UPSTREAM: "0",
    // The streams are cut at the end: keyed runs are then cancelled at once instead of 30 s later.
    IDEMPOTENCY_DETACH_MS: "1",
    LOG_LEVEL: "error",
  }));
  const key = await createKey(gw.url);
  const headers = (i: number): Record<string, string> => ({
    "content-type": "application/json",
    authorization: `Bearer ${key}`,
    ...(mode === "keyed" ? { "idempotency-key": `heap-${crypto.randomUUID()}-${i}` } : {}),
  });
  // Warm-up: the paths of this mode compiled and their first allocations made before the baseline.
  for (let i = 0; i < 20; i++) {
    const res = await fetch(gw.url + PATH, {
      method: "POST",
      headers: headers(i),
      body: chat("warm-up", false),
    });
    await res.body?.cancel();
  }
  const idleHeap = await heapNow();
  const idleRss = Deno.memoryUsage().rss;
  const cut = new AbortController();
  let open = 0, received = 0;
  const allOpen = Promise.withResolvers<void>();
  const one = async (i: number) => {
    const res = await fetch(gw.url + PATH, {
      method: "POST",
      headers: headers(i),
      body: STREAM,
      signal: cut.signal,
    });
    if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
    const reader = res.body!.getReader();
    let first = true;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) throw new Error("a stream ended before it was measured");
      received += value.byteLength;
      if (first && (first = false, ++open === n)) allOpen.resolve();
    }
  };
  const streams = Array.from(
    { length: n },
    (_, i) => one(i).catch((err) => cut.signal.aborted || allOpen.reject(err)),
  );
  await allOpen.promise;
  await sleep(OPEN_MS);
  const openHeap = await heapNow();
  const result: HeapResult = {
    mode,
    streams: n,
    idleHeap,
    openHeap,
    keptBytes: gw.app.keyedRuns.budget.used,
    keyedRuns: gw.app.keyedRuns.size,
    receivedPerStream: received / n,
    idleRss,
    openRss: Deno.memoryUsage().rss,
  };
  cut.abort();
  await Promise.all(streams);
  return result;
}

if (import.meta.main) {
  if (!gc) throw new Error("run with --v8-flags=--expose-gc");
  const mode = Deno.args[0];
  const n = Number(Deno.args[1] ?? 100);
  if ((mode !== "keyed" && mode !== "unkeyed") || !Number.isInteger(n) || n < 1) {
    throw new Error("usage: bench/idempotency_heap.ts keyed|unkeyed N");
  }
  console.log(JSON.stringify(await measure(mode, n)));
  // The gateway's close would wait for the cut runs' settlements; the figures are out, the process can go.
  Deno.exit(0);
}
