/** GET /admin/backup: a consistent snapshot of the money and identity data as NDJSON (docs/backup.md). */
import type { App } from "../app.ts";
import type { RouteContext } from "../request/context.ts";
import { backupStream } from "../backup/stream.ts";

export async function adminBackup(app: App, ctx: RouteContext): Promise<Response> {
  // What this process settled before the request is in it: its settlements still waiting for the group
  // commit's round are committed first, as every reader of the store does (docs/backup.md).
  await app.accounts.committer.flush();
  const now = app.now();
  const source = app.config.DATABASE_URL?.startsWith("postgres") ? "postgres" : "kv";
  const started = performance.now();
  const body = backupStream(app.store, source, now, app.config.BACKUP_HOLD_MS, (err) => {
    const ms = Math.round(performance.now() - started);
    if (err) app.log.error("backup failed", { error: err instanceof Error ? err.message : String(err), ms });
    else app.log.info("backup written", { ms });
  });
  return new Response(body, {
    headers: {
      "content-type": "application/x-ndjson",
      "content-disposition": `attachment; filename="gateway-backup-${now}.ndjson"`,
      "cache-control": "no-store",
      "x-request-id": ctx.requestId,
    },
  });
}
