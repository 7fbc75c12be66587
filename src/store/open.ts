/** Opens the store named by the configuration. Shared by the gateway and the direct-mode admin CLI. */
import type { Config } from "../config/env.ts";
import { KvStore } from "./kv_store.ts";

/** Another process (a gateway or the direct-mode admin CLI) already holds this DATA_DIR. */
export class DataDirInUseError extends Error {
  constructor(dataDir: string) {
    super(
      `DATA_DIR ${dataDir} is in use by another gateway or admin process (lock ${lockPath(dataDir)}); ` +
        "only one process may own an embedded store. Stop it, use another DATA_DIR, or go through the " +
        "running gateway (GATEWAY_URL and ADMIN_TOKEN).",
    );
    this.name = "DataDirInUseError";
  }
}

const lockPath = (dataDir: string) => `${dataDir}/gateway.lock`;

/** Unset DATABASE_URL: Deno KV file `${DATA_DIR}/gateway.kv`; "memory": in-memory KV (tests). */
export async function openStore(config: Config): Promise<KvStore> {
  if (config.DATABASE_URL === "memory") return KvStore.open(":memory:");
  if (config.DATABASE_URL !== undefined) {
    throw new Error("DATABASE_URL: only unset (Deno KV file) or 'memory' is supported by this build");
  }
  await Deno.mkdir(config.DATA_DIR, { recursive: true });
  const release = lockDataDir(config.DATA_DIR);
  try {
    return await KvStore.open(`${config.DATA_DIR}/gateway.kv`, release);
  } catch (err) {
    release();
    throw err;
  }
}

/**
 * The process is the single writer of its KV file: it keeps balances in memory and group-commits whole
 * key records, so a second writer would silently lose money (README "One process per DATA_DIR"). An exclusive
 * advisory lock on a file beside the store refuses the second process at once; the OS drops the lock when
 * the holder dies, kill -9 included, so a crash never leaves a stale lock. Returns the release function.
 */
function lockDataDir(dataDir: string): () => void {
  const file = Deno.openSync(lockPath(dataDir), { read: true, write: true, create: true });
  if (!file.tryLockSync(true)) {
    file.close();
    throw new DataDirInUseError(dataDir);
  }
  return () => file.close();
}
