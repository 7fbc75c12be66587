/**
 * The extraction process (spawned by runner_process.ts with no permissions at all; arguments: the
 * memory limit in bytes and the sampling interval in ms): reads jobs from stdin, one at a time, and
 * writes the answers to stdout as frames (frames.ts); `done` carries the process's RSS. Exits when
 * stdin closes, i.e. when the gateway closes it or dies.
 */
import "./quiet_stdout.ts";
import { encodeFrame, FrameReader } from "./frames.ts";
import { runJob } from "./host.ts";
import { startMemoryWatch } from "./memory_watch.ts";
import type { JobHeader } from "./protocol.ts";

const [limit, every] = Deno.args.map(Number);
if (limit && limit > 0) startMemoryWatch(limit, every || 20);

const enc = new TextEncoder();
const frames = new FrameReader(Deno.stdin.readable.getReader());
const out = Deno.stdout.writable.getWriter();

for (;;) {
  const f = await frames.read();
  if (!f) break;
  await runJob(
    f.header as unknown as JobHeader,
    f.body,
    (r) =>
      r.t === "section"
        ? out.write(encodeFrame({ t: r.t, id: r.id, anchor: r.anchor }, enc.encode(r.text)))
        : out.write(encodeFrame(r.t === "done" ? { ...r, rss: Deno.memoryUsage().rss } : r)),
  );
}
Deno.exit(0);
