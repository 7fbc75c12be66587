/**
 * `deno task admin backup --out FILE` and `deno task admin restore --in FILE` (docs/backup.md). A backup is
 * taken from the running gateway (remote mode: GET /admin/backup), written to FILE.partial, checked whole and
 * only then renamed to FILE. A restore (direct mode) checks the whole file first, then writes it into the
 * configured store, which must be empty.
 */
import type { Config } from "../../src/config/env.ts";
import { BackupFileError, readBackup, verifyBackup } from "../../src/backup/reader.ts";
import { restoreBackup, StoreNotEmptyError } from "../../src/backup/restore.ts";
import { describeStore, openStore } from "../../src/store/open.ts";
import { Logger } from "../../src/util/log.ts";
import { OperationError } from "./backend.ts";

export async function backupToFile(gatewayUrl: string, token: string, out: string): Promise<void> {
  const res = await fetch(new URL("/admin/backup", gatewayUrl), {
    headers: { authorization: `Bearer ${token}` },
  });
  if (!res.ok || res.body === null) {
    const text = await res.text();
    throw new OperationError(`admin: GET /admin/backup answered ${res.status}: ${text.slice(0, 500)}`);
  }
  const partial = `${out}.partial`;
  const file = await Deno.open(partial, { write: true, create: true, truncate: true, mode: 0o600 });
  await res.body.pipeTo(file.writable);
  try {
    const summary = await verifyBackup((await Deno.open(partial)).readable);
    await Deno.rename(partial, out);
    console.log(JSON.stringify({ file: out, ...summary }, null, 2));
  } catch (err) {
    if (err instanceof BackupFileError) {
      throw new OperationError(
        `admin: the backup received is not whole (${err.message}); kept as ${partial}`,
      );
    }
    throw err;
  }
}

export async function restoreFromFile(config: Config, path: string): Promise<void> {
  try {
    const summary = await verifyBackup((await Deno.open(path)).readable);
    console.error(`admin: ${path} checked: ${JSON.stringify(summary.counts)}`);
  } catch (err) {
    if (err instanceof BackupFileError) throw new OperationError(`admin: ${path} refused: ${err.message}`);
    throw err;
  }
  const log = new Logger("warn", (line) => console.error(line));
  const store = await openStore(config, log);
  try {
    if (!(await store.isEmptyForRestore())) throw new StoreNotEmptyError(describeStore(config));
    const result = await restoreBackup(store, readBackup((await Deno.open(path)).readable), Date.now());
    console.log(JSON.stringify({ restored_into: describeStore(config), ...result }, null, 2));
  } catch (err) {
    if (err instanceof StoreNotEmptyError) throw new OperationError(`admin: ${err.message}`);
    throw err;
  } finally {
    await store.close();
  }
}
