/** Opens the store named by the configuration. Shared by the gateway and the direct-mode admin CLI. */
import type { Config } from "../config/env.ts";
import { DataDirInUseError } from "./in_use.ts";
import { isLockedError, optimistic } from "./kv_atomic.ts";
import { KvStore } from "./kv_store.ts";
import { describeDatabase } from "./pg_url.ts";
import type { Store } from "./store.ts";
import type { Logger } from "../util/log.ts";

const lockPath = (dataDir: string) => `${dataDir}/gateway.lock`;

/**
 * Unset DATABASE_URL: Deno KV file `${DATA_DIR}/gateway.kv`, refused (DataDirInUseError) while another process
 * owns it; "memory": in-memory KV (tests); `postgres://…`: the Postgres store; `kv:<path or URL>`: a Deno KV
 * that several processes share (`kv:` alone: Deno Deploy's own).
 */
export async function openStore(config: Config, log: Logger): Promise<Store> {
  const url = config.DATABASE_URL;
  if (url === "memory") return KvStore.open(":memory:", log);
  // Processes starting at once on one shared KV file can find it locked while another sets it up.
  if (url?.startsWith("kv:")) {
    return optimistic("open", () => openUnlessLocked(url.slice(3) || undefined, log));
  }
  if (url !== undefined) return openPostgres(url, log);
  await Deno.mkdir(config.DATA_DIR, { recursive: true });
  const release = lockDataDir(config.DATA_DIR);
  try {
    return await KvStore.open(`${config.DATA_DIR}/gateway.kv`, log, release);
  } catch (err) {
    release();
    throw err;
  }
}

/**
 * Whether other processes may share the store, so money goes through credit leases (src/accounts/
 * lease_ledger.ts): Postgres and a `kv:` store. The embedded KV file and "memory" belong to one process.
 */
export function isSharedStore(config: Config): boolean {
  const url = config.DATABASE_URL;
  return url !== undefined && url !== "memory";
}

async function openUnlessLocked(path: string | undefined, log: Logger): Promise<{ value: KvStore } | null> {
  try {
    return { value: await KvStore.open(path, log) };
  } catch (err) {
    if (isLockedError(err)) return null;
    throw err;
  }
}

/** What `openStore(config)` opens, for operators (a Postgres URL without its password). */
export function describeStore(config: Config): string {
  const url = config.DATABASE_URL;
  if (url === "memory") return "an in-memory store (DATABASE_URL=memory): changes are lost on exit";
  if (url?.startsWith("kv:")) return `the shared Deno KV ${url.length > 3 ? url.slice(3) : "of Deno Deploy"}`;
  return url === undefined
    ? `the store in DATA_DIR=${config.DATA_DIR}`
    : `the Postgres store ${describeDatabase(url)}`;
}

/**
 * `url` is a postgres:// URL (the configuration checked it). The Postgres client is loaded only here, so a
 * gateway on the KV file does not carry it.
 */
async function openPostgres(url: string, log: Logger): Promise<Store> {
  const { openPgStore } = await import("./pg_open.ts");
  return await openPgStore(url, log);
}

/**
 * The process is the single writer of its KV file: it keeps balances and holds in memory, so a second writer
 * could spend beyond a balance (docs/operator-guide.md "One process per KV file"). An exclusive advisory lock on a file beside
 * the store refuses the second process at once; the OS drops the lock when the holder dies, kill -9 included,
 * so a crash never leaves a stale lock. Returns the release function.
 */
function lockDataDir(dataDir: string): () => void {
  const file = Deno.openSync(lockPath(dataDir), { read: true, write: true, create: true });
  if (!file.tryLockSync(true)) {
    file.close();
    throw new DataDirInUseError(dataDir, lockPath(dataDir));
  }
  return () => file.close();
}
