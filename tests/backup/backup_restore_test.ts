/**
 * Backup and restore end to end (docs/backup.md): a backup taken from a running gateway under load is one
 * moment of the store, and restored into a fresh KV store and a fresh Postgres store it gives every key back
 * with its old secret, its balance, its usage rows, its hours and its ledger; then the move from KV to
 * Postgres: two Postgres processes serve the restored keys with the same money.
 */
import assert from "node:assert/strict";
import { startSimulator } from "../../sim/server.ts";
import { formatUsd, parseUsd } from "../../src/money/usd.ts";
import { KvStore } from "../../src/store/kv_store.ts";
import { freshSchema, PG_SKIP_NOTE, TEST_DATABASE_URL } from "../../src/store/testing/pg_test_schema.ts";
import {
  admin,
  freePort,
  keyView,
  sleep,
  spawnGateway,
  waitReady,
  withGatewayProcesses,
} from "../support/gateway_process.ts";
import { walkUsage } from "../support/usage_rows.ts";
import {
  assertConsistent,
  chat,
  type HistoryKey,
  makeHistory,
  readSnapshot,
  runAdmin,
  type Snapshot,
  takeBackup,
  underLoad,
} from "./backup_support.ts";

const HOUR_MS = 3_600_000;

/** The restored gateway at `url` gives back what the snapshot holds, key by key. */
async function assertRestored(
  url: string,
  snap: Snapshot,
  keys: HistoryKey[],
  caps: unknown[],
): Promise<void> {
  for (const [i, { id, key }] of keys.entries()) {
    const k = snap.keys.get(id)!;
    const models = await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    await models.body?.cancel();
    assert.equal(models.status, 200, `key ${id} authenticates with its old secret`);
    const view = await admin(url, "GET", `/admin/keys/${id}`);
    assert.deepEqual(
      [view.balance_usd, view.credited_usd, view.spent_usd, view.held_usd].map(parseUsd),
      [k.credited - k.spent, k.credited, k.spent, 0n],
    );
    assert.deepEqual(view.caps, caps[i]);
    const rows = await walkUsage(url, key, 7);
    assert.deepEqual(
      rows.map((r) => [r.request_id, r.charged_usd]),
      k.rows.map((r) => [r.requestId, formatUsd(r.charged)]),
      `key ${id}: the usage report pages the snapshot's rows`,
    );
    const ledger = (await admin(url, "GET", `/admin/keys/${id}/ledger`)).data as Record<string, string>[];
    assert.deepEqual(
      ledger.map((e) => [e.id, e.kind, e.amount_usd]),
      k.ledger.map((e) => [e.id, e.kind, formatUsd(e.amountUsd)]),
    );
  }
  const packages = (await admin(url, "GET", "/admin/packages")).data as Record<string, unknown>[];
  assert.deepEqual(packages.map((p) => [p.name, p.credit_usd, p.price]), [["Старт", "10.00", 500]]);
  const methods = (await admin(url, "GET", "/admin/payment-methods")).data as Record<string, unknown>[];
  const manual = methods.find((m) => m.id === "manual")!;
  assert.deepEqual([manual.available, manual.details], [true, "Счёт 40817810000000000001"]);
}

/** The hourly sums of the restored store are the snapshot's (rebuilt from the rows). */
async function assertHours(store: KvStore | null, snap: Snapshot): Promise<void> {
  if (store === null) return;
  for (const [id, k] of snap.keys) {
    const hours = await store.usageHours(id, 0, Date.now() + 2 * HOUR_MS);
    assert.deepEqual(
      hours.map((h) => [h.hour, h.model, h.requests, h.charged]),
      k.hours.map((h) => [h.hour, h.model, h.requests, h.charged]),
    );
  }
}

interface Source {
  snap: Snapshot;
  file: string;
  keys: HistoryKey[];
  caps: unknown[];
}

/** A KV gateway with history; a backup taken while four clients keep it busy. */
async function backupUnderLoad(simUrl: string, dir: string): Promise<Source> {
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const gw = spawnGateway(port, `${dir}/source`, simUrl);
  try {
    await waitReady(url, gw);
    const keys = await makeHistory(url);
    const caps = await Promise.all(
      keys.map(async (k) => (await admin(url, "GET", `/admin/keys/${k.id}`)).caps),
    );
    const { result: bytes, statuses } = await underLoad(url, keys, 4, () => takeBackup(url));
    assert.ok(statuses.every((s) => s === 200), JSON.stringify(statuses));
    const snap = await readSnapshot(bytes);
    assertConsistent(snap);
    // The history is in it (the backup commits this process's pending settlements first); of the load, what
    // was settled when the backup was asked for, and what settled before the snapshot began.
    const rowsInSnapshot = [...snap.keys.values()].reduce((n, k) => n + k.rows.length, 0);
    assert.ok(rowsInSnapshot >= 12, `rows in the snapshot: ${rowsInSnapshot}`);
    const file = `${dir}/backup.ndjson`;
    await Deno.writeFile(file, bytes);
    return { snap, file, keys, caps };
  } finally {
    gw.kill("SIGKILL");
    await gw.status;
  }
}

Deno.test("backup under load on KV, restored into a fresh KV store: every key, balance, row, hour and entry", async () => {
  const sim = await startSimulator();
  const dir = await Deno.makeTempDir({ prefix: "gw-backup-" });
  try {
    const src = await backupUnderLoad(sim.url, dir);
    const restored = await runAdmin(["restore", "--in", src.file], { DATA_DIR: `${dir}/restored` });
    assert.equal(restored.code, 0, restored.stderr);
    assert.equal(JSON.parse(restored.stdout).written.key, 3);
    const store = await KvStore.open(`${dir}/restored/gateway.kv`);
    try {
      await assertHours(store, src.snap);
    } finally {
      await store.close();
    }
    // A second restore into the same (now not empty) store is refused, nothing written.
    const again = await runAdmin(["restore", "--in", src.file], { DATA_DIR: `${dir}/restored` });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /is not empty: a backup is restored only into an empty store/);
    const port = freePort();
    const url = `http://127.0.0.1:${port}`;
    const gw = spawnGateway(port, `${dir}/restored`, sim.url);
    try {
      await waitReady(url, gw);
      await assertRestored(url, src.snap, src.keys, src.caps);
    } finally {
      gw.kill("SIGKILL");
      await gw.status;
    }
  } finally {
    await sim.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name:
    `a KV gateway with history moves to Postgres: restored, then two processes serve the same keys with the same money${PG_SKIP_NOTE}`,
  ignore: !TEST_DATABASE_URL,
  async fn() {
    const sim = await startSimulator();
    const dir = await Deno.makeTempDir({ prefix: "gw-move-" });
    const schema = await freshSchema();
    try {
      const src = await backupUnderLoad(sim.url, dir);
      const env = { DATABASE_URL: schema.url };
      const restored = await runAdmin(["restore", "--in", src.file], env);
      assert.equal(restored.code, 0, restored.stderr);
      const again = await runAdmin(["restore", "--in", src.file], env);
      assert.equal(again.code, 1);
      assert.match(again.stderr, /is not empty/);
      const shared = { ...env, LEASE_IDLE_MS: "300", KEY_REFRESH_MS: "200" };
      await withGatewayProcesses(sim.url, [shared, shared], async ([a, b]) => {
        await assertRestored(a!.url, src.snap, src.keys, src.caps);
        // Both processes spend from the same money: 6 requests on each, on one key.
        const { id, key } = src.keys[0]!;
        for (let n = 0; n < 6; n++) {
          assert.equal(await chat(a!.url, key, 500 + n), 200);
          assert.equal(await chat(b!.url, key, 600 + n), 200);
        }
        const k = src.snap.keys.get(id)!;
        // Each process's settlements flushed (the key view does it) and its idle lease given back.
        for (const g of [a!, b!]) {
          const deadline = Date.now() + 10_000;
          while ((await keyView(g.url, id)).leased !== 0n) {
            assert.ok(Date.now() < deadline, "leases still out after 10 s");
            await sleep(50);
          }
        }
        const rows = await walkUsage(a!.url, key, 50);
        assert.equal(rows.length, k.rows.length + 12);
        const charged = rows.slice(0, 12).reduce((s, r) => s + parseUsd(r.charged_usd), 0n);
        for (const g of [a!, b!]) {
          const view = await keyView(g.url, id);
          assert.deepEqual(
            [formatUsd(view.spent), formatUsd(view.balance), formatUsd(view.leased)],
            [formatUsd(k.spent + charged), formatUsd(k.credited - k.spent - charged), "0.00"],
          );
        }
      });
    } finally {
      await schema.drop();
      await sim.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
