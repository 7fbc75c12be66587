/**
 * Crash safety (§8.1, durability promise in README): holds live only in the serving process, so a
 * gateway killed with SIGKILL mid-stream comes back with the hold released; settlements that were
 * group-committed before the kill are kept.
 */
import assert from "node:assert/strict";
import { startSimulator } from "../../sim/server.ts";
import { admin, freePort, sleep, spawnGateway, tearDown, waitReady } from "../support/gateway_process.ts";
import { post } from "../support/harness.ts";

Deno.test("kill -9 mid-stream: the restarted gateway has released the hold and kept committed settlements", async () => {
  const sim = await startSimulator();
  const dataDir = await Deno.makeTempDir();
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  let proc = spawnGateway(port, dataDir, sim.url);
  try {
    await waitReady(url);
    const created = await admin(url, "POST", "/admin/keys", { balance_usd: "1.00" });
    const key = created.key as string;
    // One finished request, settled and group-committed before the crash.
    const done = await post(url + "/v1/chat/completions", key, {
      model: "k3",
      max_tokens: 50,
      messages: [{ role: "user", content: "Привет [[sim:words=5]]" }],
    });
    assert.equal(done.status, 200);
    await done.text();
    await sleep(200);
    const settled = await admin(url, "GET", `/admin/keys/${created.id}`);
    assert.notEqual(settled.spent_usd, "0.00");
    // A long stream holding money when the process dies.
    const res = await post(url + "/v1/chat/completions", key, {
      model: "k3",
      stream: true,
      max_tokens: 20_000,
      messages: [{ role: "user", content: "Долго [[sim:words=20000]] [[sim:interval=20]]" }],
    });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    await reader.read();
    const during = await admin(url, "GET", `/admin/keys/${created.id}`);
    assert.notEqual(during.held_usd, "0.00");
    proc.kill("SIGKILL");
    await proc.status;
    await reader.cancel().catch(() => {});

    proc = spawnGateway(port, dataDir, sim.url);
    await waitReady(url);
    const after = await admin(url, "GET", `/admin/keys/${created.id}`);
    assert.equal(after.held_usd, "0.00");
    assert.equal(after.balance_usd, settled.balance_usd);
    assert.equal(after.spent_usd, settled.spent_usd);
  } finally {
    await tearDown(proc, sim, dataDir);
  }
});

Deno.test("SIGTERM then SIGKILL while a stream drains: its delivered part is charged at restart, once", async () => {
  const sim = await startSimulator();
  const dataDir = await Deno.makeTempDir();
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  let proc = spawnGateway(port, dataDir, sim.url);
  try {
    await waitReady(url);
    const created = await admin(url, "POST", "/admin/keys", { balance_usd: "1.00" });
    const res = await post(url + "/v1/chat/completions", created.key, {
      model: "k3",
      stream: true,
      max_tokens: 20_000,
      messages: [{ role: "user", content: "Долго [[sim:words=20000]] [[sim:interval=10]]" }],
    });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    let received = 0;
    const reading = (async () => {
      for (;;) {
        const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
        if (done) return;
        received += value!.byteLength;
      }
    })();
    while (received < 2_000) await sleep(20);
    proc.kill("SIGTERM"); // the stream goes on draining…
    await sleep(500);
    proc.kill("SIGKILL"); // …until the orchestrator loses patience
    await proc.status;
    await reading;

    const settledOnce = async () => {
      proc = spawnGateway(port, dataDir, sim.url);
      await waitReady(url);
      const k = await admin(url, "GET", `/admin/keys/${created.id}`);
      const usage = await (await fetch(url + "/v1/usage/requests", {
        headers: { authorization: `Bearer ${created.key}` },
      })).json();
      proc.kill("SIGKILL");
      await proc.status;
      return { k, rows: usage.data };
    };
    const first = await settledOnce();
    assert.equal(first.rows.length, 1, JSON.stringify(first.rows));
    const row = first.rows[0];
    assert.equal(row.status, "cancelled");
    assert.equal(row.usage_source, "estimated");
    assert.ok(row.output_tokens > 0 && row.output_tokens <= 20_000, String(row.output_tokens));
    assert.notEqual(row.charged_usd, "0.00");
    assert.equal(first.k.spent_usd, row.charged_usd);
    assert.equal(first.k.held_usd, "0.00");
    // A second restart finds nothing left to settle: no double charge.
    const second = await settledOnce();
    assert.equal(second.rows.length, 1);
    assert.equal(second.k.spent_usd, first.k.spent_usd);
    assert.equal(second.k.balance_usd, first.k.balance_usd);
  } finally {
    await tearDown(proc, sim, dataDir);
  }
});

Deno.test("a second gateway or a direct-mode admin CLI on the same DATA_DIR is refused at start-up", async () => {
  const sim = await startSimulator();
  const dataDir = await Deno.makeTempDir();
  const port = freePort();
  const first = spawnGateway(port, dataDir, sim.url);
  const url = `http://127.0.0.1:${port}`;
  const cwd = new URL("../..", import.meta.url).pathname;
  try {
    await waitReady(url);
    const refused = async (args: string[]) => {
      const started = Date.now();
      const out = await new Deno.Command(Deno.execPath(), {
        args,
        cwd,
        env: { PORT: String(freePort()), HOST: "127.0.0.1", DATA_DIR: dataDir, ALPHA_UPSTREAM_URL: sim.url },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stderr = new TextDecoder().decode(out.stderr);
      assert.notEqual(out.code, 0, stderr);
      assert.ok(Date.now() - started < 10_000);
      assert.ok(stderr.includes(`DATA_DIR ${dataDir} is in use`), stderr);
    };
    await refused(["run", "-A", "--unstable-kv", "--unstable-no-legacy-abort", "main.ts"]);
    await refused(["run", "-A", "--unstable-kv", "scripts/admin.ts", "key", "create", "--balance", "1.00"]);
    // The first gateway still serves, and its lock dies with it (kill -9 leaves no stale lock).
    assert.equal((await fetch(url + "/v1/models")).status, 401);
    first.kill("SIGKILL");
    await first.status;
    const cli = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--unstable-kv", "scripts/admin.ts", "key", "create", "--balance", "1.00"],
      cwd,
      env: { DATA_DIR: dataDir },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(cli.code, 0, new TextDecoder().decode(cli.stderr));
    assert.match(new TextDecoder().decode(cli.stdout).trim().split("\n").at(-1)!, /^gd-/);
  } finally {
    try {
      first.kill("SIGKILL");
    } catch { /* already gone */ }
    await first.status;
    await sim.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});
