/**
 * The gateway on Deno Deploy (docs/deploy/deno-deploy.md): what Deploy implies when unset, and what cannot work
 * there, refused at start-up like any other bad setting (exit 2) rather than left half-working.
 *
 * Deploy runs the entry point in isolates it starts, stops and multiplies by itself: an isolate's disk is its
 * own and is lost with it, several may serve at once, and each gets SIGINT and 5 s before SIGKILL when it is
 * stopped. So money needs a store every isolate shares (Deploy's KV, a KV Connect URL, Postgres), and nothing
 * may rely on one long-lived process.
 */
import type { Config } from "./env.ts";

/** Deploy stops an isolate with SIGINT and kills it 5 s later; the gateway needs about 1 s to close. */
export const DEPLOY_MAX_SHUTDOWN_GRACE_MS = 4_000;

/**
 * Whether the process runs on Deno Deploy: Deploy sets DENO_DEPLOY (the current Deploy, "true") and
 * DENO_DEPLOYMENT_ID (the current Deploy and Deploy Classic). Both names are reserved there: a project cannot
 * set them itself.
 */
export function onDenoDeploy(vars: Record<string, string | undefined>): boolean {
  return Boolean(vars.DENO_DEPLOY || vars.DENO_DEPLOYMENT_ID);
}

/** The values Deploy implies for settings left unset. */
export const DEPLOY_DEFAULTS: Readonly<Record<string, string>> = Object.freeze({
  // Deploy's own KV, which every isolate of the project shares; the default KV file would be the isolate's.
  DATABASE_URL: "kv:",
  // One Worker per document inside the isolate (the weaker bounds of docs/files.md), not extraction processes.
  FILES_EXTRACT_MODE: "worker",
  // Deploy's edge holds the clients' connections; the gateway serves with plain Deno.serve behind it.
  HTTP_CONNECTION_DEADLINES: "off",
  SHUTDOWN_GRACE_MS: String(DEPLOY_MAX_SHUTDOWN_GRACE_MS - 1_000),
});

/** One refusal per setting that cannot work on Deploy, as `NAME: why`; empty when the settings fit. */
export function deployRefusals(c: Config): string[] {
  const refusals: string[] = [];
  const refuse = (name: string, why: string) => refusals.push(`${name}: ${why}`);
  const db = c.DATABASE_URL;
  if (db === "memory") {
    refuse(
      "DATABASE_URL",
      "memory loses every balance and usage row when an isolate stops; use kv: or postgres://",
    );
  } else if (db?.startsWith("kv:") && db !== "kv:" && !/^kv:https?:\/\//.test(db)) {
    refuse(
      "DATABASE_URL",
      "a KV file on Deno Deploy belongs to one isolate and is lost with it; use kv: (the project's KV), " +
        "kv:https://… (a KV Connect URL) or postgres://",
    );
  }
  if (c.WORKERS > 1) refuse("WORKERS", "Deno Deploy starts isolates itself; leave WORKERS unset (1)");
  if (c.SHUTDOWN_GRACE_MS > DEPLOY_MAX_SHUTDOWN_GRACE_MS) {
    refuse(
      "SHUTDOWN_GRACE_MS",
      `Deno Deploy kills an isolate 5 s after asking it to stop; at most ${DEPLOY_MAX_SHUTDOWN_GRACE_MS}, so ` +
        "streams still open are cut and billed before",
    );
  }
  if (c.TELEGRAM_BOT_TOKEN && !c.TELEGRAM_WEBHOOK_SECRET) {
    refuse(
      "TELEGRAM_WEBHOOK_SECRET",
      "the bot's long polling needs one process that always runs; set TELEGRAM_WEBHOOK_SECRET and " +
        "PUBLIC_BASE_URL (webhook mode)",
    );
  }
  if (c.FILES_EXTRACT_MODE !== "worker") {
    refuse(
      "FILES_EXTRACT_MODE",
      "documents are extracted in Workers inside the isolate on Deno Deploy, not in processes; leave it unset " +
        "(worker)",
    );
  }
  if (!c.ALPHA_UPSTREAM_URL && !c.BETA_UPSTREAM_URL && !c.DELTA_UPSTREAM_URL && !c.THETA_UPSTREAM_URL) {
    refuse(
      "*_UPSTREAM_URL",
      "no *_UPSTREAM_URL is set: demo mode would create a funded demo key at every isolate start",
    );
  }
  return refusals;
}
