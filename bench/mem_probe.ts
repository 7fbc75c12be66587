/**
 * The gateway's main.ts (or MEM_PROBE_MAIN, e.g. ./bare_proxy.ts) with a memory probe beside it, for
 * bench/stream_rss.ts: every MEM_PROBE_MS (default 250) one JSON line with `Deno.memoryUsage()` and the size
 * and use of each V8 heap space (and V8's own malloc, the bytes allocated so far) is appended to MEM_PROBE_FILE. With `--v8-flags=--expose-gc`, SIGUSR2 runs a
 * full collection first and logs what survives (the live set), marked `gc`. The probe lives here, not in
 * src/, so the gateway as it ships carries none of it.
 */
import { Session } from "node:inspector";
import { getHeapSpaceStatistics, getHeapStatistics } from "node:v8";

const file = Deno.env.get("MEM_PROBE_FILE");
if (file) {
  const t0 = performance.now();
  const log = (extra: Record<string, unknown>) => {
    const spaces: Record<string, number> = {};
    const used: Record<string, number> = {};
    for (const s of getHeapSpaceStatistics()) {
      spaces[s.space_name] = s.space_size;
      used[s.space_name] = s.space_used_size;
    }
    const t = Math.round(performance.now() - t0);
    const h = getHeapStatistics() as ReturnType<typeof getHeapStatistics> & {
      total_allocated_bytes?: number;
    };
    // What V8 itself mallocs (compiler zones and the like), and the bytes allocated on the heap so far.
    const v8 = {
      malloced: h.malloced_memory,
      peakMalloced: h.peak_malloced_memory,
      allocated: h.total_allocated_bytes,
    };
    const line = JSON.stringify({ t, ...extra, ...Deno.memoryUsage(), ...v8, spaces, used });
    Deno.writeTextFileSync(file, line + "\n", { append: true });
  };
  Deno.unrefTimer(setInterval(() => log({}), Number(Deno.env.get("MEM_PROBE_MS") ?? 250)));
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) {
    Deno.addSignalListener("SIGUSR2", () => {
      gc();
      log({ gc: true });
    });
  }
  // MEM_PROBE_HEAP_SAMPLE=1: SIGUSR1 starts V8's sampling heap profiler (counting what is collected too, so
  // the profile is what was allocated, by allocation site), the next SIGUSR1 writes it to MEM_PROBE_FILE.heapprofile.
  const heapSample = Deno.env.get("MEM_PROBE_HEAP_SAMPLE");
  if (heapSample === "1" || heapSample === "old") {
    const session = new Session();
    session.connect();
    let sampling = false;
    Deno.addSignalListener("SIGUSR1", () => {
      if (!sampling) {
        sampling = true;
        session.post("HeapProfiler.startSampling", {
          samplingInterval: 8192,
          includeObjectsCollectedByMajorGC: true,
          // `old`: what reaches the old space (live, or collected by a full collection), not young garbage.
          includeObjectsCollectedByMinorGC: heapSample === "1",
        });
        return;
      }
      sampling = false;
      session.post("HeapProfiler.stopSampling", (err, r) => {
        if (!err) Deno.writeTextFileSync(`${file}.heapprofile`, JSON.stringify(r.profile));
      });
    });
  }
}
await import(Deno.env.get("MEM_PROBE_MAIN") ?? "../main.ts");
