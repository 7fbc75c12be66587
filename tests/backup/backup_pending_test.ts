/**
 * GET /admin/backup holds what the answering process settled before it was asked: its settlements still
 * waiting for the group commit's round are committed first (docs/backup.md), as every reader of the store does.
 */
import assert from "node:assert/strict";
import { startTestGateway } from "../support/harness.ts";
import { assertConsistent, chat, readSnapshot, takeBackup } from "./backup_support.ts";

Deno.test("backup: a request settled just before it is in it, while its commit round is still held", async () => {
  const dir = await Deno.makeTempDir({ prefix: "gw-backup-pending-" });
  const t = await startTestGateway({ DATABASE_URL: "", DATA_DIR: dir });
  try {
    const { id, key } = await t.newKey("5.00");
    // The next round's commit waits until released: the settlement stays pending while the backup is asked for.
    const store = t.gw.app.store;
    const commit = store.commit.bind(store);
    let release!: () => void;
    const released = new Promise<void>((r) => release = r);
    let held = 0;
    store.commit = async (batch) => {
      if (batch.usage.length > 0) {
        held++;
        await released;
      }
      return commit(batch);
    };
    assert.equal(await chat(t.url, key, 1), 200);
    const backup = takeBackup(t.url);
    setTimeout(release, 50);
    const snap = await readSnapshot(await backup);
    assert.equal(held, 1);
    const k = snap.keys.get(id)!;
    assert.equal(k.rows.length, 1);
    assert.ok(k.rows[0]!.charged > 0n);
    assert.equal(k.spent, k.rows[0]!.charged); // the key's money and its row from the same moment
    assertConsistent(snap);
  } finally {
    await t.close();
    await Deno.remove(dir, { recursive: true });
  }
});
