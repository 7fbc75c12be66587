/**
 * Inside the extraction process: a tiny worker that samples the process's resident memory and, once
 * it passes the limit, tells the gateway on stderr (a line starting with MEMORY_MARK); the gateway
 * then kills the process. A worker, because the process's main thread may be stuck in a long
 * synchronous decode; stderr, because stdout carries frames; and the gateway does the killing because
 * Deno cannot read another process's /proc entry without --allow-all, and the extraction process has
 * no permissions at all (Deno.memoryUsage needs none, nor does a blob: worker or writing to stderr).
 */

export const MEMORY_MARK = "\u0000extraction-memory-limit";

export function startMemoryWatch(limitBytes: number, everyMs: number): void {
  const code = `
    const limit = ${Math.floor(limitBytes)};
    const line = (rss) => new TextEncoder().encode(${JSON.stringify(MEMORY_MARK)} + " " + rss + "\\n");
    let fired = false;
    setInterval(() => {
      const rss = Deno.memoryUsage().rss;
      if (!fired && rss > limit) {
        fired = true;
        Deno.stderr.writeSync(line(rss));
      }
    }, ${Math.max(1, Math.floor(everyMs))});`;
  new Worker(URL.createObjectURL(new Blob([code], { type: "text/javascript" })), { type: "module" });
}
