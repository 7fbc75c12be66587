/**
 * The gateway's main.ts (or MEM_PROBE_MAIN, e.g. ./bare_proxy.ts) with a memory probe beside it, for
 * bench/stream_rss.ts: every MEM_PROBE_MS (default 250) one JSON line with `Deno.memoryUsage()` and the size
 * and use of each V8 heap space is appended to MEM_PROBE_FILE. With `--v8-flags=--expose-gc`, SIGUSR2 runs a
 * full collection first and logs what survives (the live set), marked `gc`. The probe lives here, not in
 * src/, so the gateway as it ships carries none of it.
 */
import { getHeapSpaceStatistics } from "node:v8";

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
    const line = JSON.stringify({ t, ...extra, ...Deno.memoryUsage(), spaces, used });
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
}
await import(Deno.env.get("MEM_PROBE_MAIN") ?? "../main.ts");
