/**
 * The highest RSS of some processes while a load runs (bench/side_by_side.ts): VmRSS from /proc every
 * `everyMs`, the first read before the load starts and the last after it ends, so a short run still has two.
 */
import { memoryOf } from "./procs.ts";

export async function whilePeakRss<T>(
  pids: readonly number[],
  fn: () => Promise<T>,
  everyMs = 200,
): Promise<[T, Map<number, number>]> {
  const peak = new Map<number, number>(pids.map((p) => [p, 0]));
  const read = async () => {
    for (const pid of pids) {
      const kib = (await memoryOf(pid).catch(() => undefined))?.rssKiB;
      if (kib !== undefined && Number.isFinite(kib)) peak.set(pid, Math.max(peak.get(pid)!, kib));
    }
  };
  await read();
  let running = true;
  const sampler = (async () => {
    while (running) {
      await new Promise((r) => setTimeout(r, everyMs));
      if (running) await read();
    }
  })();
  try {
    return [await fn(), peak];
  } finally {
    running = false;
    await sampler;
    await read();
  }
}

/** The RSS of `pids` now, KiB (NaN for a process that is gone). */
export async function rssNow(pids: readonly number[]): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (const pid of pids) out.set(pid, (await memoryOf(pid).catch(() => undefined))?.rssKiB ?? NaN);
  return out;
}
