/**
 * main.ts as Deno Deploy runs it (docs/deploy/deno-deploy.md): `deno run -A main.ts` with no flag of ours (Deploy
 * takes none: the unstable features come from deno.json) and Deploy's own variables set. A setting that cannot
 * work there stops the start with exit code 2 and says why; the accepted settings — no DATABASE_URL, so
 * Deploy's KV (`kv:`, which locally is the Deno KV Deno keeps for the --location origin) — serve, bill through
 * the shared store's leases, and stop within Deploy's 5 s after SIGINT.
 */
import assert from "node:assert/strict";
import { startSimulator } from "../../sim/server.ts";
import { parseUsd } from "../../src/money/usd.ts";
import { exitWithin, freePort, newKey, waitReady } from "../support/gateway_process.ts";
import { ADMIN_TOKEN, post } from "../support/harness.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const DEPLOY_ENV = { DENO_DEPLOY: "true", DENO_DEPLOYMENT_ID: "test-deployment" };
/** Deploy kills an isolate this long after its SIGINT. */
const DEPLOY_STOP_MS = 5_000;

/** `deno run -A [--location] main.ts` as Deploy starts it, on loopback, with `env` added. */
function runAsDeploy(
  env: Record<string, string>,
  location?: string,
  stderr: "piped" | "inherit" = "inherit",
) {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", ...(location ? [`--location=${location}`] : []), "main.ts"],
    cwd: ROOT,
    env: { ...DEPLOY_ENV, HOST: "127.0.0.1", PORT: String(freePort()), ADMIN_TOKEN, ...env },
    stdin: "null",
    stdout: "null",
    stderr,
  }).spawn();
}

Deno.test("on Deploy a setting that cannot work stops the start: exit 2, every refusal named", async () => {
  const proc = runAsDeploy(
    {
      ALPHA_UPSTREAM_URL: "http://127.0.0.1:9",
      ALPHA_UPSTREAM_KEY: "k",
      WORKERS: "2",
      DATABASE_URL: "memory",
    },
    undefined,
    "piped",
  );
  const output = proc.output();
  const status = await exitWithin(proc, 20_000).catch((err) => {
    proc.kill("SIGKILL");
    throw err;
  });
  const stderr = new TextDecoder().decode((await output).stderr);
  assert.equal(status.code, 2, stderr);
  assert.equal(
    stderr.trim(),
    [
      "invalid configuration on Deno Deploy:",
      "  DATABASE_URL: memory loses every balance and usage row when an isolate stops; use kv: or postgres://",
      "  WORKERS: Deno Deploy starts isolates itself; leave WORKERS unset (1)",
    ].join("\n"),
  );
});

Deno.test("on Deploy the accepted settings start on Deploy's KV, answer, bill and stop within 5 s of SIGINT", async () => {
  const sim = await startSimulator();
  // An origin of this run's own: `kv:` opens the Deno KV that Deno keeps for it, removed at the end.
  const location = `http://deploy-test-${crypto.randomUUID()}.invalid`;
  const kvDir = `${await denoDir()}/location_data/${await sha256Hex(location)}`;
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc = runAsDeploy(
    { PORT: String(port), ALPHA_UPSTREAM_URL: sim.url, ALPHA_UPSTREAM_KEY: "k" },
    location,
  );
  let exited = false;
  try {
    await waitReady(url, proc);
    const health = await fetch(`${url}/healthz`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { status: "ok" });

    const { id, key } = await newKey(url, parseUsd("1.00"));
    const res = await post(`${url}/v1/chat/completions`, key, {
      model: "k3",
      messages: [{ role: "user", content: "привет [[sim:words=3]]" }],
    });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal((await res.json()).object, "chat.completion");
    const view = await (await fetch(`${url}/admin/keys/${id}`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    })).json();
    assert.ok(parseUsd(view.spent_usd) > 0n, JSON.stringify(view));

    proc.kill("SIGINT"); // how Deploy stops an isolate
    const status = await exitWithin(proc, DEPLOY_STOP_MS);
    exited = true;
    assert.equal(status.code, 0);
    assert.ok(Deno.statSync(`${kvDir}/kv.sqlite3`).isFile, "kv: opened Deno's KV of the origin");
  } finally {
    if (!exited) {
      proc.kill("SIGKILL");
      await proc.status;
    }
    await sim.close();
    await Deno.remove(kvDir, { recursive: true }).catch(() => {});
  }
});

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The Deno cache directory, where Deno keeps an origin's KV (location_data/). */
async function denoDir(): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stdout: "piped" }).output();
  assert.equal(out.code, 0);
  return JSON.parse(new TextDecoder().decode(out.stdout)).denoDir;
}
