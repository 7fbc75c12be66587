/** Subprocess management for the benchmark: the gateway and the simulator each in their own process. */
import { startTask } from "../scripts/start_task.ts";
import { catProc } from "./cpu.ts";

/** Repository root (bench/ lives directly under it); subprocesses run there so deno.json applies. */
export const ROOT = new URL("..", import.meta.url).pathname;
export const ADMIN_TOKEN = "bench-admin-token-0123456789abcdef";

export interface Proc {
  name: string;
  pid: number;
  url: string;
  /** SIGTERM, then SIGKILL if it has not exited after `graceMs`. Idempotent. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Stops every process in `procs` (as it is when the signal comes) on SIGINT/SIGTERM, then exits 130, so an
 * interrupted bench leaves none behind. Returns the function that removes the handlers.
 */
export function stopOnSignal(procs: Proc[]): () => void {
  const onSignal = () => {
    Promise.all(procs.map((p) => p.stop())).finally(() => Deno.exit(130));
  };
  Deno.addSignalListener("SIGINT", onSignal);
  Deno.addSignalListener("SIGTERM", onSignal);
  return () => {
    Deno.removeSignalListener("SIGINT", onSignal);
    Deno.removeSignalListener("SIGTERM", onSignal);
  };
}

/** A port that was free a moment ago (bind to :0, read, close). */
export function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/**
 * `deno <args>` as a child; with `fdLimit`, through `sh -c 'ulimit -n …; exec deno …'` (same pid), so it may
 * open at least that many descriptors — when the hard limit allows it or the shell may raise it
 * (CAP_SYS_RESOURCE); otherwise it keeps the limit it has (read /proc/<pid>/limits to know).
 */
function spawn(
  name: string,
  args: string[],
  env: Record<string, string>,
  url: string,
  fdLimit?: number,
): Proc {
  const [cmd, argv] = fdLimit
    ? ["sh", [
      "-c",
      // Raise only: a higher limit stays as it is.
      `n=$(ulimit -n); [ "$n" = unlimited ] || [ "$n" -ge ${fdLimit} ] || ulimit -n ${fdLimit} 2>/dev/null; ` +
      'exec "$0" "$@"',
      Deno.execPath(),
      ...args,
    ]]
    : [Deno.execPath(), args];
  const child = new Deno.Command(cmd, {
    args: argv,
    cwd: ROOT,
    env,
    stdin: "null",
    stdout: "null",
    stderr: "inherit",
  }).spawn();
  let stopping: Promise<void> | undefined;
  return {
    name,
    pid: child.pid,
    url,
    stop(graceMs = 5_000) {
      stopping ??= (async () => {
        const exited = child.status.then(() => true);
        try {
          child.kill("SIGTERM");
        } catch { /* already gone */ }
        let timer: ReturnType<typeof setTimeout> | undefined;
        const timeout = new Promise<boolean>((r) => timer = setTimeout(() => r(false), graceMs));
        const ok = await Promise.race([exited, timeout]);
        clearTimeout(timer);
        if (!ok) {
          try {
            child.kill("SIGKILL");
          } catch { /* already gone */ }
          await child.status;
        }
      })();
      return stopping;
    },
  };
}

/** Polls until anything answers HTTP at `url` (any status), or throws after `timeoutMs`. */
export async function waitReady(url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      const res = await fetch(url);
      await res.body?.cancel();
      return;
    } catch (err) {
      if (performance.now() > deadline) throw new Error(`${url} not ready after ${timeoutMs} ms: ${err}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** Spawns a process on a free port and waits until `readyPath` answers; stops it if it never does. */
async function startOnFreePort(
  name: string,
  args: string[],
  env: (port: number) => Record<string, string>,
  readyPath: string,
  fdLimit?: number,
): Promise<Proc> {
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const p = spawn(name, args, env(port), url, fdLimit);
  try {
    await waitReady(url + readyPath);
  } catch (err) {
    await p.stop();
    throw err;
  }
  return p;
}

export function startSim(): Promise<Proc> {
  return startOnFreePort(
    "sim",
    ["run", "-A", "sim/main.ts"],
    (port) => ({ SIM_PORT: String(port), SIM_HOST: "127.0.0.1" }),
    "/__sim/requests",
  );
}

export interface GatewayOptions {
  /** Directory for a V8 CPU profile of the gateway (written when it exits). */
  cpuProfDir?: string;
  /** Variables added to (or overriding) the gateway's environment; "" unsets one. */
  env?: Record<string, string>;
  /** Open-file limit to ask for (spawn). */
  fdLimit?: number;
}

/** The variables `deno task start` sets before `deno` (scripts/start_task.ts): a gateway here runs with them,
 *  as it ships. */
export const START_ENV: Readonly<Record<string, string>> = startTask().env;

/** `env` over START_ENV; one of those set to "" is left out, for the runtime's default (Deno refuses an empty
 *  DENO_V8_FLAGS). */
export function withStartEnv(env: Record<string, string>): Record<string, string> {
  const out = { ...START_ENV, ...env };
  for (const name of Object.keys(START_ENV)) if (out[name] === "") delete out[name];
  return out;
}

export function startGatewayProc(simUrl: string, opts: GatewayOptions = {}): Promise<Proc> {
  const prof = opts.cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${opts.cpuProfDir}`] : [];
  return startOnFreePort(
    "gateway",
    ["run", "-A", "--unstable-kv", "--unstable-no-legacy-abort", ...prof, "main.ts"],
    (port) =>
      withStartEnv({
        PORT: String(port),
        HOST: "127.0.0.1",
        DATABASE_URL: "memory",
        ADMIN_TOKEN,
        ALPHA_UPSTREAM_URL: simUrl,
        ALPHA_UPSTREAM_KEY: "up-alpha",
        BETA_UPSTREAM_URL: simUrl,
        BETA_UPSTREAM_KEY: "up-beta",
        DELTA_UPSTREAM_URL: simUrl,
        DELTA_UPSTREAM_KEY: "up-delta",
        THETA_UPSTREAM_URL: simUrl,
        THETA_UPSTREAM_KEYS: "up-theta-1,up-theta-2",
        // The hold test opens BENCH_STREAMS (1,000) streams at once: past the default standard share of the
        // capacity slots (1,024 − 103) they would be refused. Unbounded here; the count is still kept.
        MAX_INFLIGHT_UPSTREAM: "0",
        ...opts.env,
      }),
    "/v1/models",
    opts.fdLimit,
  );
}

/**
 * The bare Deno proxy (bench/bare_proxy.ts) in front of the simulator: the runtime's own floor. `opts.env` adds
 * its settings (PUMP, METER, CLIENT, SPIN_US); `opts.cpuProfDir` as for the gateway.
 */
export function startBareProxy(
  simUrl: string,
  fdLimit?: number,
  opts: { env?: Record<string, string>; cpuProfDir?: string } = {},
): Promise<Proc> {
  return startOnFreePort(
    "bare proxy",
    [
      "run",
      "--allow-net",
      "--allow-env",
      // METER=kv keeps its usage rows in a KV file.
      ...opts.env?.METER === "kv" ? ["--unstable-kv", "--allow-read", "--allow-write"] : [],
      ...opts.cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${opts.cpuProfDir}`] : [],
      "bench/bare_proxy.ts",
    ],
    (port) => ({ UPSTREAM: simUrl, PORT: String(port), HOST: "127.0.0.1", ...opts.env }),
    "/__sim/requests",
    fdLimit,
  );
}

/** The minimal OpenAI Chat mock (bench/chat_mock.ts) of the side-by-side section. */
export function startChatMock(fdLimit?: number): Promise<Proc> {
  return startOnFreePort(
    "chat mock",
    ["run", "--allow-net", "--allow-env", "bench/chat_mock.ts"],
    (port) => ({ PORT: String(port), HOST: "127.0.0.1" }),
    "/",
    fdLimit,
  );
}

/** Creates a key through the admin API; returns its id and the full key. */
export async function createKeyRecord(
  gatewayUrl: string,
  balanceUsd = "100000.00",
): Promise<{ id: string; key: string }> {
  const res = await fetch(`${gatewayUrl}/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ balance_usd: balanceUsd }),
  });
  const json = await res.json();
  if (res.status !== 201 || typeof json.key !== "string") {
    throw new Error(`key creation failed: ${res.status} ${JSON.stringify(json)}`);
  }
  return { id: json.id, key: json.key };
}

/** Creates a key through the admin API; returns the full key. */
export async function createKey(gatewayUrl: string, balanceUsd = "100000.00"): Promise<string> {
  return (await createKeyRecord(gatewayUrl, balanceUsd)).key;
}

export interface Memory {
  rssKiB: number;
  hwmKiB: number;
}

/** VmRSS and VmHWM (peak RSS) of a process from /proc/<pid>/status. */
export async function memoryOf(pid: number): Promise<Memory> {
  const text = await catProc([`/proc/${pid}/status`]);
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? NaN);
  return { rssKiB: field("VmRSS"), hwmKiB: field("VmHWM") };
}
