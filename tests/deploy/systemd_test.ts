/**
 * deploy/systemd/gateway.service (docs/deploy/systemd.md): systemd accepts it, its command line is the "start"
 * task's, and what it runs serves WORKERS=2 and stops cleanly on the SIGTERM systemd sends. No systemd runs as
 * PID 1 here, so the last test starts the unit's ExecStart= itself, in its WorkingDirectory=, with the
 * environment systemd would give it: the unit's Environment= lines and the EnvironmentFile= (its example,
 * deploy/systemd/gateway.env.example) under a cleared environment, plus the test's own values.
 *
 * Only two strings of the unit are replaced to run it here: the Deno binary (/usr/local/bin/deno) by this
 * Deno, and the install directory (/opt/gateway) by this repository.
 */
import assert from "node:assert/strict";
import { startSimulator } from "../../sim/server.ts";
import { parseUsd } from "../../src/money/usd.ts";
import { startTask } from "../../scripts/start_task.ts";
import { toolTest } from "../support/ci.ts";
import { exitWithin, freePort, newKey, sleep, waitReady } from "../support/gateway_process.ts";
import { ADMIN_TOKEN } from "../support/harness.ts";
import {
  environmentLines,
  execWords,
  parseEnvFile,
  parseUnit,
  timespanMs,
  unitValue,
} from "./systemd_unit.ts";

const ROOT = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");
const UNIT_FILE = `${ROOT}/deploy/systemd/gateway.service`;
const ENV_EXAMPLE = `${ROOT}/deploy/systemd/gateway.env.example`;
const SYSTEMD_ANALYZE = "/usr/bin/systemd-analyze";
const DENO_IN_UNIT = "/usr/local/bin/deno";
const APP_IN_UNIT = "/opt/gateway";
/** systemd's PATH for system services. */
const SYSTEMD_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** The unit as it would be installed on this machine: Deno and the code where they are here. */
function localUnit(): string {
  return Deno.readTextFileSync(UNIT_FILE).replaceAll(DENO_IN_UNIT, Deno.execPath()).replaceAll(
    APP_IN_UNIT,
    ROOT,
  );
}

toolTest(
  "gateway.service passes systemd-analyze verify, without a warning about it",
  [SYSTEMD_ANALYZE],
  async () => {
    const dir = await Deno.makeTempDir();
    try {
      const file = `${dir}/gateway.service`;
      await Deno.writeTextFile(file, localUnit());
      const out = await new Deno.Command(SYSTEMD_ANALYZE, { args: ["verify", file], cwd: dir }).output();
      const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
      // Warnings about other units of the machine (the ones a dependency names) are not this unit's.
      const aboutUnit = text.split("\n").filter((line) => line.includes("gateway.service"));
      assert.equal(out.code, 0, text);
      assert.deepEqual(aboutUnit, [], text);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

Deno.test("gateway.service runs `deno run` with the start task's flags and variables, main.ts from WorkingDirectory", () => {
  const unit = parseUnit(Deno.readTextFileSync(UNIT_FILE));
  const { env, words: start } = startTask();
  const [program, ...args] = execWords(unitValue(unit, "Service", "ExecStart"));
  assert.equal(program, DENO_IN_UNIT);
  assert.equal(unitValue(unit, "Service", "WorkingDirectory"), APP_IN_UNIT);
  // The task's words, its "deno" and script aside, plus --cached-only (no download at start-up).
  assert.deepEqual(args, [...start.slice(1, -1), "--cached-only", `${APP_IN_UNIT}/${start.at(-1)}`]);
  // The runtime's memory settings the task sets before `deno`, as the unit's Environment= lines.
  assert.ok(Object.keys(env).length > 0, "the start task sets no variable");
  const unitEnv = environmentLines(unit.get("Service")?.get("Environment") ?? []);
  for (const [name, value] of Object.entries(env)) assert.equal(unitEnv[name], value, name);
  assert.equal(unitValue(unit, "Service", "EnvironmentFile"), "/etc/gateway/gateway.env");
});

Deno.test("the unit's command line serves WORKERS=2 on one port and the whole tree exits 0 on SIGTERM", async () => {
  const unit = parseUnit(localUnit());
  const [program, ...args] = execWords(unitValue(unit, "Service", "ExecStart"));
  const stopTimeoutMs = timespanMs(unitValue(unit, "Service", "TimeoutStopSec"));
  const example = parseEnvFile(await Deno.readTextFile(ENV_EXAMPLE));
  const sim = await startSimulator();
  const dir = await Deno.makeTempDir();
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  // The example's upstreams all point at the simulator.
  const upstreams = Object.fromEntries(
    Object.keys(example).filter((k) => k.endsWith("_UPSTREAM_URL")).map((k) => [k, sim.url]),
  );
  const supervisor = new Deno.Command(program!, {
    args,
    cwd: unitValue(unit, "Service", "WorkingDirectory"),
    clearEnv: true,
    env: {
      PATH: SYSTEMD_PATH,
      ...environmentLines(unit.get("Service")?.get("Environment") ?? []),
      // The unit's cache directory (/var/cache/gateway) does not exist here: this machine's Deno cache does.
      DENO_DIR: await denoDir(),
      ...example,
      ...upstreams,
      PORT: String(port),
      HOST: "127.0.0.1",
      WORKERS: "2",
      // A store the two processes share, as WORKERS needs (src/http/supervisor.ts, main.ts).
      DATABASE_URL: `kv:${dir}/shared.kv`,
      DATA_DIR: dir,
      ADMIN_TOKEN,
      KEY_REFRESH_MS: "200",
    },
    stdin: "null",
    stdout: "null",
    stderr: "inherit", // a gateway that fails to start says why in the test's output
  }).spawn();
  let workers: number[] = [];
  let exited = false;
  try {
    await waitReady(url, supervisor);
    workers = await childPids(supervisor.pid, 2);
    // The runtime's memory settings are variables (the unit's, from the start task): every worker inherits them.
    const runtime = Object.entries(startTask().env);
    for (const pid of workers) {
      const environ = await environOf(pid);
      for (const [name, value] of runtime) {
        assert.equal(environ.get(name), value, `worker ${pid}: ${name}`);
      }
    }
    const { key } = await newKey(url, parseUsd("10.00"));
    const seen = new Set<string>();
    for (let n = 0; seen.size < 2 || n < 10; n++) {
      assert.ok(n < 200, `only workers ${[...seen]} answered in ${n} requests`);
      seen.add(await chatOnFreshConnection(url, key));
    }
    assert.deepEqual([...seen].sort(), ["1", "2"]);

    supervisor.kill("SIGTERM"); // KillMode=mixed: systemd signals the main process only
    const status = await exitWithin(supervisor, stopTimeoutMs);
    exited = true;
    assert.equal(status.code, 0);
    const left = [];
    for (const pid of workers) if (await running(pid)) left.push(pid);
    assert.deepEqual(left, [], "a worker outlived the supervisor");
    await assert.rejects(fetch(url + "/healthz"), "no process is left on the port");
  } finally {
    if (!exited) {
      for (const pid of [supervisor.pid, ...workers]) {
        try {
          Deno.kill(pid, "SIGKILL");
        } catch { /* already gone */ }
      }
      await supervisor.status;
    }
    await sim.close();
    await Deno.remove(dir, { recursive: true });
  }
});

/** One chat request on a connection of its own (which the kernel gives to either worker): its worker. */
async function chatOnFreshConnection(url: string, key: string): Promise<string> {
  const client = Deno.createHttpClient({});
  try {
    const res = await fetch(`${url}/v1/chat/completions`, {
      client,
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "k3", messages: [{ role: "user", content: "привет [[sim:words=3]]" }] }),
    });
    const body = await res.text();
    assert.equal(res.status, 200, body);
    assert.equal(JSON.parse(body).object, "chat.completion", body);
    return res.headers.get("x-gateway-worker") ?? "(none)";
  } finally {
    client.close();
  }
}

/** The `count` children of `pid` (the workers), waiting up to 10 s for them all to be started. */
async function childPids(pid: number, count: number): Promise<number[]> {
  let pids: number[] = [];
  for (let i = 0; i < 200 && pids.length < count; i++) {
    if (i > 0) await sleep(50);
    const text = await procFile(`${pid}/task/${pid}/children`);
    pids = (text ?? "").trim().split(/\s+/).filter((p) => p !== "").map(Number);
  }
  assert.equal(pids.length, count, `children of the supervisor: ${pids}`);
  return pids;
}

/** The environment `pid` was started with (/proc/<pid>/environ). */
async function environOf(pid: number): Promise<Map<string, string>> {
  const pairs = ((await procFile(`${pid}/environ`)) ?? "").split("\0").filter((kv) => kv.includes("="));
  return new Map(pairs.map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]));
}

/** Whether `pid` is still a live process (a zombie has exited). */
async function running(pid: number): Promise<boolean> {
  const stat = await procFile(`${pid}/stat`);
  return stat !== undefined && stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
}

/**
 * A file under /proc, or undefined when it is not there (the process is gone). Read by `cat`: Deno allows
 * reading /proc/<pid>/ only under --allow-all, which the test task does not grant.
 */
async function procFile(path: string): Promise<string | undefined> {
  const out = await new Deno.Command("cat", { args: [`/proc/${path}`], stdout: "piped", stderr: "null" })
    .output();
  return out.success ? new TextDecoder().decode(out.stdout) : undefined;
}

/** The Deno cache directory the tests run with. */
async function denoDir(): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stdout: "piped" }).output();
  assert.equal(out.code, 0);
  return JSON.parse(new TextDecoder().decode(out.stdout)).denoDir;
}
