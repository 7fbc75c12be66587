/**
 * The operator's side of backups (docs/backup.md): `deno task admin backup --out` from a running gateway, and a
 * restore that refuses a newer format, a truncated file and a changed byte before anything is written; and a
 * backup of a Postgres store served by two processes under load is one moment of it.
 */
import assert from "node:assert/strict";
import { startSimulator } from "../../sim/server.ts";
import { freePort, spawnGateway, waitReady, withGatewayProcesses } from "../support/gateway_process.ts";
import { ADMIN_TOKEN } from "../support/harness.ts";
import { pgGatewayTest } from "../support/pg_harness.ts";
import {
  assertConsistent,
  makeHistory,
  readSnapshot,
  runAdmin,
  takeBackup,
  underLoad,
} from "./backup_support.ts";

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

Deno.test("admin backup --out from a running gateway; restore refuses a newer format, a cut file and a changed byte, writing nothing", async () => {
  const sim = await startSimulator();
  const dir = await Deno.makeTempDir({ prefix: "gw-backup-cli-" });
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const gw = spawnGateway(port, `${dir}/source`, sim.url);
  try {
    await waitReady(url, gw);
    await makeHistory(url);
    const file = `${dir}/b.ndjson`;
    const taken = await runAdmin(["backup", "--out", file], { GATEWAY_URL: url, ADMIN_TOKEN });
    assert.equal(taken.code, 0, taken.stderr);
    assert.equal(JSON.parse(taken.stdout).counts.key, 3);
    assert.equal(await exists(`${file}.partial`), false);
    const bytes = await Deno.readFile(file);
    await readSnapshot(bytes); // whole and checked
    const text = new TextDecoder().decode(bytes);

    const newer = text.replace('"version":1,', '"version":2,');
    assert.notEqual(newer, text);
    const cut = bytes.slice(0, Math.floor(bytes.length / 2));
    const charged = text.indexOf('"charged":"') + '"charged":"'.length;
    const digit = text[charged]!;
    const changed = text.slice(0, charged) + (digit === "9" ? "8" : String(Number(digit) + 1)) +
      text.slice(charged + 1);
    const cases: [string, Uint8Array, RegExp][] = [
      ["newer", new TextEncoder().encode(newer), /backup format version 2 was written by a newer gateway/],
      ["cut", cut, /truncated/],
      [
        "cut at a line",
        bytes.slice(0, text.lastIndexOf("\n", text.length - 2) + 1),
        /no trailer: the file is truncated/,
      ],
      ["changed", new TextEncoder().encode(changed), /checksum mismatch/],
      ["not a backup", new TextEncoder().encode('{"hello":1}\n'), /not a gateway backup/],
    ];
    for (const [name, content, message] of cases) {
      const bad = `${dir}/${name}.ndjson`;
      await Deno.writeFile(bad, content);
      const target = `${dir}/restore-${name.replaceAll(" ", "-")}`;
      const r = await runAdmin(["restore", "--in", bad], { DATA_DIR: target });
      assert.equal(r.code, 1, `${name}: ${r.stderr}`);
      assert.match(r.stderr, message, name);
      assert.equal(await exists(target), false, `${name}: nothing written, not even the store's directory`);
    }
    // The file as taken restores.
    const ok = await runAdmin(["restore", "--in", file], { DATA_DIR: `${dir}/restore-ok` });
    assert.equal(ok.code, 0, ok.stderr);
    // Usage: backup is remote only, restore direct only.
    const local = await runAdmin(["backup", "--out", file], { DATA_DIR: `${dir}/source` });
    assert.equal(local.code, 2);
    assert.match(local.stderr, /backup: set GATEWAY_URL and ADMIN_TOKEN/);
    const remote = await runAdmin(["restore", "--in", file], { GATEWAY_URL: url, ADMIN_TOKEN });
    assert.equal(remote.code, 2);
    assert.match(remote.stderr, /restore: unset GATEWAY_URL/);
  } finally {
    gw.kill("SIGKILL");
    await gw.status;
    await sim.close();
    await Deno.remove(dir, { recursive: true });
  }
});

pgGatewayTest(
  "a backup of a Postgres store served by two processes under load is one moment",
  async (env) => {
    const sim = await startSimulator();
    try {
      await withGatewayProcesses(sim.url, [env, env], async ([a, b]) => {
        const keys = await makeHistory(a!.url);
        // Load on both processes; the backup from one of them.
        const { result: bytes, statuses } = await underLoad(
          b!.url,
          keys,
          3,
          () => underLoad(a!.url, keys, 3, () => takeBackup(a!.url)),
        );
        assert.ok(statuses.every((s) => s === 200));
        const snap = await readSnapshot(bytes.result);
        assert.ok(bytes.statuses.every((s) => s === 200));
        assertConsistent(snap);
        assert.equal(snap.keys.size, 3);
        const header = JSON.parse(
          new TextDecoder().decode(bytes.result.subarray(0, bytes.result.indexOf(10))),
        );
        assert.equal(header.source, "postgres");
      });
    } finally {
      await sim.close();
    }
  },
);
