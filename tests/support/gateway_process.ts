/**
 * A real gateway process (`deno run … main.ts`) on a KV file in `dataDir`, for the tests that signal or kill
 * it and restart it on the same data (crash_test.ts, shutdown_test.ts).
 */
import assert from "node:assert/strict";
import { formatUsd, parseUsd } from "../../src/money/usd.ts";
import { ADMIN_TOKEN } from "./harness.ts";

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function freePort(): number {
  const l = Deno.listen({ port: 0, hostname: "127.0.0.1" });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** Alpha served by `simUrl`; `env` adds or overrides variables; `stderr: "piped"` for a test that reads it. */
export function spawnGateway(
  port: number,
  dataDir: string,
  simUrl: string,
  env: Record<string, string> = {},
  stderr: "inherit" | "piped" = "inherit",
): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", "--unstable-no-legacy-abort", "main.ts"],
    cwd: new URL("../..", import.meta.url).pathname,
    env: {
      PORT: String(port),
      HOST: "127.0.0.1",
      DATA_DIR: dataDir,
      ADMIN_TOKEN,
      ALPHA_UPSTREAM_URL: simUrl,
      ALPHA_UPSTREAM_KEY: "k",
      ...env,
    },
    stdout: "null",
    stderr, // inherited: a gateway that fails to start says why in the test's output
  }).spawn();
}

/** The process's exit status, or an error once `ms` pass without it (the process is left running). */
export async function exitWithin(proc: Deno.ChildProcess, ms: number): Promise<Deno.CommandStatus> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no exit within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([proc.status, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves once the gateway answers; rejects if `proc` (when given) exits first, or after 20 s. */
export async function waitReady(url: string, proc?: Deno.ChildProcess): Promise<void> {
  let exited: number | undefined;
  proc?.status.then((s) => exited = s.code);
  for (let i = 0; i < 400; i++) {
    if (exited !== undefined) throw new Error(`gateway exited with code ${exited} before it was ready`);
    try {
      const r = await fetch(url + "/v1/models");
      await r.body?.cancel();
      return;
    } catch {
      await sleep(50);
    }
  }
  throw new Error("gateway did not start");
}

export async function admin(url: string, method: string, path: string, body?: unknown) {
  const r = await fetch(url + path, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return await r.json();
}

/** A key created through the admin API of the process at `url`. */
export async function newKey(url: string, balance: bigint): Promise<{ id: string; key: string }> {
  const created = await admin(url, "POST", "/admin/keys", { balance_usd: formatUsd(balance) });
  assert.ok(created.key, JSON.stringify(created));
  return created;
}

/** The admin key view on `url` (which flushes that process's settlements first): its money exact, and caps. */
export async function keyView(url: string, id: string) {
  const v = await admin(url, "GET", `/admin/keys/${id}`);
  return {
    balance: parseUsd(v.balance_usd),
    held: parseUsd(v.held_usd),
    spent: parseUsd(v.spent_usd),
    credited: parseUsd(v.credited_usd),
    leased: parseUsd(v.leased_usd),
    caps: v.caps as Record<string, string | null>,
  };
}

/** A gateway process and its base URL. */
export interface GatewayProc {
  url: string;
  proc: Deno.ChildProcess;
}

/** A DATA_DIR for processes whose store is DATABASE_URL (shared: Postgres or kv:). */
export const UNUSED_DATA_DIR = "(unused: DATABASE_URL is set)";

/**
 * One gateway process per env (each with its DATABASE_URL: a shared store) in front of the simulator at
 * `simUrl`; all killed (SIGKILL) at the end.
 */
export async function withGatewayProcesses(
  simUrl: string,
  envs: Record<string, string>[],
  fn: (gws: GatewayProc[]) => Promise<void>,
): Promise<void> {
  const gws = envs.map((env) => {
    const port = freePort();
    return { url: `http://127.0.0.1:${port}`, proc: spawnGateway(port, UNUSED_DATA_DIR, simUrl, env) };
  });
  try {
    await Promise.all(gws.map((g) => waitReady(g.url, g.proc)));
    await fn(gws);
  } finally {
    for (const { proc } of gws) {
      try {
        proc.kill("SIGKILL");
      } catch { /* already gone */ }
      await proc.status;
    }
  }
}

/** The end of a process test: the gateway killed (if still running), the simulator closed, the data removed. */
export async function tearDown(proc: Deno.ChildProcess, sim: { close(): Promise<void> }, dataDir: string) {
  try {
    proc.kill("SIGKILL");
  } catch { /* already gone */ }
  await proc.status;
  await sim.close();
  await Deno.remove(dataDir, { recursive: true });
}
