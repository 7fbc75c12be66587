/**
 * GET /admin/backup's body: the snapshot read as records and written as lines as the client takes them. The
 * snapshot holds the store (KV: this process's writes wait; Postgres: one transaction stays open), so it is
 * bounded: past `holdMs` it is cut, the body ends without its trailer, and a restore refuses the file as
 * truncated (reader.ts). A client that goes away ends it too.
 */
import type { BackupStore } from "../store/store.ts";
import { BackupEncoder } from "./encode.ts";
import type { BackupHeader } from "./records.ts";
import { readSnapshotRecords } from "./snapshot.ts";

export class SnapshotTimeoutError extends Error {
  constructor(holdMs: number) {
    super(`backup snapshot cut after ${holdMs} ms (BACKUP_HOLD_MS)`);
  }
}

/** Lines kept ahead of the client. */
const AHEAD = 64;

export function backupStream(
  store: BackupStore,
  source: BackupHeader["source"],
  now: number,
  holdMs: number,
  onEnd: (err: unknown) => void,
): ReadableStream<Uint8Array> {
  let controller!: TransformStreamDefaultController<Uint8Array>;
  const pipe = new TransformStream<Uint8Array, Uint8Array>({ start: (c) => void (controller = c) }, {
    highWaterMark: AHEAD,
  }, { highWaterMark: AHEAD });
  const out = pipe.writable.getWriter();
  const encoder = new BackupEncoder();
  void (async () => {
    let deadline: ReturnType<typeof setTimeout> | undefined;
    const cut = new Promise<never>((_, reject) => {
      deadline = setTimeout(() => reject(new SnapshotTimeoutError(holdMs)), holdMs);
    });
    cut.catch(() => {});
    try {
      await Promise.race([
        store.readSnapshot(async (view) => {
          await out.write(encoder.header(source, now));
          await readSnapshotRecords(view, now, async (rec) => {
            await Promise.race([out.write(encoder.record(rec)), cut]);
          });
        }),
        cut,
      ]);
      await out.write(encoder.trailer());
      await out.close();
      onEnd(null);
    } catch (err) {
      // Errors both sides at once; an abort would wait for a write stuck behind a client that stopped reading.
      controller.error(err);
      onEnd(err);
    } finally {
      clearTimeout(deadline);
    }
  })();
  return pipe.readable;
}
