/**
 * WORKERS=N (docs/operator-guide.md "Several processes"): this process starts N serving processes of the same entry point,
 * each listening on the same port with SO_REUSEPORT (the kernel spreads the connections) and sharing the
 * store, and numbered by GATEWAY_WORKER (the `x-gateway-worker` header). A worker that dies is started again
 * after a second — the others keep serving meanwhile; SIGTERM/SIGINT are passed on, and the supervisor exits
 * once every worker has drained.
 */
import type { Logger } from "../util/log.ts";

/** The environment variable that tells a serving process its number. */
export const WORKER_ENV = "GATEWAY_WORKER";

const RESTART_DELAY_MS = 1_000;
/** The permissions and flags of `deno task start`, which a worker is started with. */
const WORKER_FLAGS = [
  "run",
  "--allow-net",
  "--allow-env",
  "--allow-read",
  "--allow-write",
  "--allow-run",
  "--unstable-kv",
  "--unstable-no-legacy-abort",
  "--unstable-net", // Deno.listen's reusePort
];

/** The worker number this process was started as, or undefined for the process the operator started. */
export function workerNumber(): number | undefined {
  const n = Number(Deno.env.get(WORKER_ENV));
  return Number.isInteger(n) && n >= 1 ? n : undefined;
}

/** Runs `count` workers of `entry` (a file URL) until a signal; resolves with the exit code to use. `log`:
 *  where a worker's exit and restart are said. */
export function superviseWorkers(count: number, entry: string, log: Logger): Promise<number> {
  let stopping = false;
  const live = new Map<number, Deno.ChildProcess>();
  const { promise: done, resolve } = Promise.withResolvers<number>();

  const start = (n: number) => {
    const child = new Deno.Command(Deno.execPath(), {
      args: [...WORKER_FLAGS, new URL(entry).pathname],
      env: { [WORKER_ENV]: String(n) },
      stdin: "null",
    }).spawn();
    live.set(n, child);
    child.status.then((status) => {
      live.delete(n);
      if (stopping) {
        if (live.size === 0) resolve(0);
        return;
      }
      log.error("worker exited, restarting", { worker: n, code: status.code, signal: status.signal });
      setTimeout(() => stopping || start(n), RESTART_DELAY_MS);
    });
  };

  const stop = (signal: Deno.Signal) => {
    stopping = true;
    if (live.size === 0) resolve(0);
    for (const child of live.values()) {
      try {
        child.kill(signal);
      } catch { /* already gone */ }
    }
  };
  for (const signal of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(signal, () => stop(signal));
  for (let n = 1; n <= count; n++) start(n);
  return done;
}
