/**
 * Runs a server module (HEAP_PROBE_ENTRY: main.ts, bench/bare_proxy.ts) with a heap probe beside it, for
 * bench/heap_per_stream.ts: on SIGUSR2 it collects garbage, reads Deno.memoryUsage(), writes a V8 heap
 * snapshot (node:v8) to HEAP_PROBE_DIR/<n>.heapsnapshot, then the memory figures to <n>.json (n counts signals
 * from 1).
 *
 * Not through `--inspect`: while a DevTools session is open, Deno's fetch tees every response body for the
 * inspector's Network domain, and the tee pins a 64 KiB read buffer per open stream — the very thing measured.
 * Run with `--v8-flags=--expose-gc`.
 */
import { writeHeapSnapshot } from "node:v8";

const entry = Deno.env.get("HEAP_PROBE_ENTRY");
const dir = Deno.env.get("HEAP_PROBE_DIR");
if (!entry || !dir) throw new Error("HEAP_PROBE_ENTRY and HEAP_PROBE_DIR are required");
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --v8-flags=--expose-gc");

let seq = 0;
Deno.addSignalListener("SIGUSR2", () => {
  const n = ++seq;
  gc();
  // Read before the snapshot: writing it leaves buffers of its own size behind for a while, which would count
  // as external memory of the streams (a 150 MB snapshot of 2,000 streams read as ~50 KB each).
  const m = Deno.memoryUsage();
  const mem = { heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external };
  writeHeapSnapshot(`${dir}/${n}.heapsnapshot`);
  Deno.writeTextFileSync(`${dir}/${n}.json`, JSON.stringify(mem));
});

await import(new URL(entry, `file://${Deno.cwd()}/`).href);
