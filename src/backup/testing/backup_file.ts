/**
 * Backup files made in memory for tests: records written by BackupEncoder as a whole file, a file fed to the
 * reader in chunks, and a store copied into another through such a file (the store contracts get it from their
 * test files, src/store/testing/backup_contract.ts: the store sits below this layer).
 */
import type { Store } from "../../store/store.ts";
import { concatBytes } from "../../util/bytes.ts";
import { BackupEncoder } from "../encode.ts";
import { readBackup, verifyBackup } from "../reader.ts";
import { type BackupHeader, type BackupRecord, headerSchema } from "../records.ts";
import { restoreBackup, type RestoreResult } from "../restore.ts";
import { readSnapshotRecords } from "../snapshot.ts";

/** A whole backup file of `records`: header, one line each, trailer. */
export function backupFile(
  records: readonly BackupRecord[],
  source: BackupHeader["source"] = "kv",
  createdAt = 1_000,
): Uint8Array {
  const encoder = new BackupEncoder();
  return concatBytes([
    encoder.header(source, createdAt),
    ...records.map((r) => encoder.record(r)),
    encoder.trailer(),
  ]);
}

/** `bytes` as a stream of chunks of `chunk` bytes (so lines arrive cut anywhere). */
export function fileStream(bytes: Uint8Array, chunk = bytes.length || 1): ReadableStream<Uint8Array> {
  const parts: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += chunk) parts.push(bytes.slice(at, at + chunk));
  return ReadableStream.from(parts);
}

/**
 * Copies `from` into the empty store `to` as the operator does, through a file: the snapshot read at
 * `snapshotNow` inside `from.readSnapshot`, written as a file, checked whole (verifyBackup), then read again
 * and restored at `restoreNow`.
 */
export async function copyThroughFile(
  from: Store,
  source: string,
  to: Store,
  snapshotNow: number,
  restoreNow: number,
): Promise<RestoreResult> {
  const records: BackupRecord[] = [];
  await from.readSnapshot((view) =>
    readSnapshotRecords(view, snapshotNow, (r) => Promise.resolve(void records.push(r)))
  );
  const bytes = backupFile(records, headerSchema.shape.source.parse(source), snapshotNow);
  await verifyBackup(fileStream(bytes, 4096));
  return await restoreBackup(to, readBackup(fileStream(bytes, 4096)), restoreNow);
}
