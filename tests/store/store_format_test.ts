/**
 * A store written by a newer gateway (docs/upgrades.md): the gateway process (alone, or the supervisor of
 * WORKERS) and the direct-mode admin CLI refuse it at start, exit 1 with the message that says what to do, and
 * leave it unchanged.
 */
import assert from "node:assert/strict";
import { StoreFormatError } from "../../src/store/format.ts";
import { KV_MIGRATIONS, type KvMigration } from "../../src/store/kv_format.ts";
import { KvStore } from "../../src/store/kv_store.ts";
import { keyRecord } from "../../src/store/testing/test_fixtures.ts";
import { exitWithin, freePort, spawnGateway } from "../support/gateway_process.ts";

const CURRENT = KV_MIGRATIONS.at(-1)!.version;
const NEWER: KvMigration[] = [...KV_MIGRATIONS, {
  version: CURRENT + 1,
  name: "test step",
  run: (kv) => kv.set(["test_step"], true).then(() => {}),
}];
const ROOT = new URL("../..", import.meta.url).pathname;

/** Every entry of the KV file, with its versionstamp. */
async function entries(path: string): Promise<Deno.KvEntry<unknown>[]> {
  const kv = await Deno.openKv(path);
  try {
    return await Array.fromAsync(kv.list({ prefix: [] }));
  } finally {
    kv.close();
  }
}

/** Waits (bounded) for `proc` to exit; its code and stderr. Killed if it does not. */
async function refusal(proc: Deno.ChildProcess): Promise<{ code: number; stderr: string }> {
  const stderr = new Response(proc.stderr).text();
  try {
    const { code } = await exitWithin(proc, 20_000);
    return { code, stderr: await stderr };
  } finally {
    try {
      proc.kill("SIGKILL");
    } catch { /* exited */ }
    await proc.status;
  }
}

Deno.test("a gateway, a WORKERS supervisor and the direct-mode admin CLI refuse a store of a newer format at start: exit 1, the message, the store unchanged", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "store_format_" });
  const path = `${dataDir}/gateway.kv`;
  try {
    const newer = await KvStore.open(path, undefined, undefined, NEWER);
    await newer.createKey(keyRecord("key_newer", { balance: 5n, credited: 5n }));
    await newer.close();
    const before = await entries(path);
    const message = new StoreFormatError(`the Deno KV store ${path}`, CURRENT + 1, CURRENT).message;

    const gateway = await refusal(spawnGateway(freePort(), dataDir, "http://127.0.0.1:9", {}, "piped"));
    assert.equal(gateway.code, 1, gateway.stderr);
    assert.equal(gateway.stderr, `${message}\n`);

    // WORKERS: the supervisor opens the store before it starts any worker, and stops there.
    const supervisor = await refusal(
      spawnGateway(
        freePort(),
        dataDir,
        "http://127.0.0.1:9",
        { WORKERS: "2", DATABASE_URL: `kv:${path}` },
        "piped",
      ),
    );
    assert.equal(supervisor.code, 1, supervisor.stderr);
    assert.equal(supervisor.stderr, `${message}\n`);

    const cli = await refusal(
      new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--unstable-kv", "scripts/admin.ts", "key", "show", "key_newer"],
        cwd: ROOT,
        env: { DATA_DIR: dataDir },
        stdin: "null",
        stdout: "null",
        stderr: "piped",
      }).spawn(),
    );
    assert.equal(cli.code, 1, cli.stderr);
    assert.equal(cli.stderr.trimEnd().split("\n").at(-1), message, cli.stderr);

    assert.deepEqual(await entries(path), before, "every entry and its versionstamp unchanged");
  } finally {
    await Deno.remove(dataDir, { recursive: true });
  }
});
