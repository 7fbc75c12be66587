/**
 * The extraction worker (runner_worker.ts), used only when the gateway may not start processes: one
 * job per worker, answers posted back message by message.
 */
import { runJob } from "./host.ts";
import type { JobHeader } from "./protocol.ts";

const scope = globalThis as unknown as {
  onmessage: ((e: MessageEvent<{ job: JobHeader; bytes: Uint8Array }>) => void) | null;
  postMessage(message: unknown): void;
};

scope.onmessage = (e) => {
  const { job, bytes } = e.data;
  runJob(job, bytes, (r) => scope.postMessage(r));
};
