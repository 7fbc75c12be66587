/**
 * The gateway on the Postgres store (DATABASE_URL=postgres://…), end to end: billing and the usage report with
 * cursor paging, files with the per-key quota under parallel uploads, a restart that keeps balances, rows,
 * files and the tariff, and a second gateway and the direct-mode admin CLI on the same store.
 * Each test has a fresh schema (tests/support/pg_harness.ts); ignored without TEST_DATABASE_URL.
 */
import assert from "node:assert/strict";
import { startSimulator } from "../../sim/server.ts";
import { parseUsd } from "../../src/money/usd.ts";
import { post, type TestGateway, withGateway } from "../support/harness.ts";
import { upload } from "../support/uploads.ts";
import { freePort, spawnGateway, waitReady } from "../support/gateway_process.ts";
import { pgGatewayTest } from "../support/pg_harness.ts";
import { walkUsage } from "../support/usage_rows.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

async function get(t: TestGateway, key: string, path: string) {
  const res = await fetch(t.url + path, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, json: await res.json() as any };
}

/** One settled chat request; returns its request id. */
async function spend(t: TestGateway, key: string, i: number): Promise<string> {
  const res = await post(`${t.url}/v1/chat/completions`, key, {
    model: "k3",
    messages: [{ role: "user", content: `запрос ${i} [[sim:words=7]]` }],
  });
  assert.equal(res.status, 200, await res.clone().text());
  await res.text();
  return res.headers.get("request-id")!;
}

function call(t: TestGateway, key: string, method: string, path: string) {
  return fetch(t.url + path, { method, headers: { authorization: `Bearer ${key}` } });
}

pgGatewayTest(
  "billing and the usage report with cursor paging; a restart keeps money, rows and the tariff",
  async (env) => {
    const N = 7;
    let key = { id: "", key: "" };
    let ids: string[] = [];
    let view: any;
    await withGateway(async (t) => {
      key = await t.newKey("10.00");
      for (let i = 0; i < N; i++) ids.push(await spend(t, key.key, i));
      ids = ids.reverse(); // newest first
      const rows = await walkUsage(t.url, key.key, 2);
      assert.deepEqual(rows.map((r) => r.request_id), ids);
      view = (await t.admin("GET", `/admin/keys/${key.id}`)).json;
      // The gateway serves the key from a credit lease, which counts in the balance (docs/operator-guide.md "Several processes").
      assert.ok(parseUsd(view.leased_usd) > 0n, view.leased_usd);
      assert.equal(view.held_usd, "0.00");
      const charged = rows.reduce((s, r) => s + parseUsd(r.charged_usd), 0n);
      assert.ok(charged > 0n);
      assert.equal(parseUsd(view.spent_usd), charged);
      assert.equal(parseUsd(view.balance_usd), parseUsd("10.00") - charged);
      const summary = await get(t, key.key, "/v1/usage");
      assert.equal(parseUsd(summary.json.total_cost_usd), charged);
      const tariff = await t.admin("POST", "/admin/tariff", {
        rows: [{
          model: "k3",
          input_usd_per_million: "1.25",
          output_usd_per_million: "5",
          cache_read_usd_per_million: "0.1",
        }],
      });
      assert.equal(tariff.status, 200, JSON.stringify(tariff.json));
    }, env);

    await withGateway(async (t) => {
      // The lease the first gateway held was given back when it closed.
      assert.deepEqual(
        (await t.admin("GET", `/admin/keys/${key.id}`)).json,
        { ...view, leased_usd: "0.00" },
        "the same key view after a restart",
      );
      assert.deepEqual((await walkUsage(t.url, key.key, 3)).map((r) => r.request_id), ids);
      const before = parseUsd(view.balance_usd);
      const id = await spend(t, key.key, N);
      const [newest] = (await get(t, key.key, "/v1/usage/requests?limit=1")).json.data;
      assert.equal(newest.request_id, id);
      assert.equal(
        newest.rates_usd_per_million.input,
        "1.25",
        "the tariff stored before the restart applies",
      );
      const after = (await t.admin("GET", `/admin/keys/${key.id}`)).json;
      assert.equal(parseUsd(after.balance_usd), before - parseUsd(newest.charged_usd));
    }, env);
  },
);

pgGatewayTest(
  "files: upload, list, content, delete; the quota of 20 holds under parallel uploads and a restart",
  async (env) => {
    let key = { id: "", key: "" };
    let kept: string[] = [];
    await withGateway(async (t) => {
      key = await t.newKey();
      const results = await Promise.all(
        Array.from({ length: 26 }, (_, i) => upload(t, key.key, `f${i}.txt`, `файл ${i}`)),
      );
      assert.equal(results.filter((r) => r.status === 200).length, 20);
      for (const r of results.filter((r) => r.status !== 200)) {
        assert.equal(r.status, 422);
        assert.equal(r.json.detail.error.code, "file_quota_exceeded");
      }
      const ok = results.filter((r) => r.status === 200);
      const content = await call(t, key.key, "GET", `/v1/files/${ok[0]!.json.id}/content`);
      assert.equal(await content.text(), `файл ${results.indexOf(ok[0]!)}`);
      assert.equal((await call(t, key.key, "DELETE", `/v1/files/${ok[0]!.json.id}`)).status, 200);
      assert.equal((await call(t, key.key, "GET", `/v1/files/${ok[0]!.json.id}`)).status, 404);
      assert.equal((await upload(t, key.key, "again.txt", "x")).status, 200);
      assert.equal((await upload(t, key.key, "over.txt", "x")).status, 422);
      kept = ((await (await call(t, key.key, "GET", "/v1/files")).json()).data as any[]).map((f) => f.id);
      assert.equal(kept.length, 20);
    }, env);

    await withGateway(async (t) => {
      const listed = ((await (await call(t, key.key, "GET", "/v1/files")).json()).data as any[]).map((f) =>
        f.id
      );
      assert.deepEqual(listed, kept);
      assert.equal(
        (await upload(t, key.key, "still-over.txt", "x")).status,
        422,
        "the quota survives a restart",
      );
      const other = await t.newKey();
      assert.equal(
        (await call(t, other.key, "GET", `/v1/files/${kept[0]}`)).status,
        404,
        "another key's file",
      );
    }, env);
  },
);

pgGatewayTest(
  "a second gateway and the direct-mode admin CLI share a store a gateway serves: a key the CLI creates works on both",
  async (env) => {
    const sim = await startSimulator();
    const ports = [freePort(), freePort()];
    const procs = ports.map((port) => spawnGateway(port, "(unused: DATABASE_URL is set)", sim.url, env));
    try {
      for (const port of ports) await waitReady(`http://127.0.0.1:${port}`);
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--unstable-kv", "scripts/admin.ts", "key", "create", "--balance", "1.00"],
        cwd: ROOT,
        env: { ALPHA_UPSTREAM_URL: sim.url, ...env },
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
      const fullKey = new TextDecoder().decode(out.stdout).trim().split("\n").at(-1)!;
      assert.match(fullKey, /^gd-/);
      // Both running gateways find the new key in the store at its first use, and serve it.
      for (const port of ports) {
        const res = await post(`http://127.0.0.1:${port}/v1/chat/completions`, fullKey, {
          model: "k3",
          messages: [{ role: "user", content: "привет [[sim:words=3]]" }],
        });
        assert.equal(res.status, 200, await res.clone().text());
        await res.text();
      }
    } finally {
      for (const p of procs) {
        try {
          p.kill("SIGKILL");
        } catch { /* already gone */ }
        await p.status;
      }
      await sim.close();
    }
  },
);
