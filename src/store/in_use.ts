/**
 * Refusal of a second process on the embedded KV file: the process that owns it keeps balances and holds in
 * memory (memory_ledger.ts), so a second gateway (or a direct-mode admin CLI) would hold credit the first one
 * does not see. Shared stores (Postgres, `kv:`) take any number of processes through credit leases.
 */

/** Another process owns the store: main.ts and the admin CLI print the message and exit 1. */
export class StoreInUseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StoreInUseError";
  }
}

/** The local KV file's lock on `DATA_DIR/gateway.lock` is held. */
export class DataDirInUseError extends StoreInUseError {
  constructor(dataDir: string, lockPath: string) {
    super(
      `DATA_DIR ${dataDir} is in use by another gateway or admin process (lock ${lockPath}); ` +
        "only one process may own an embedded store. Stop it, use another DATA_DIR, or go through the " +
        "running gateway (GATEWAY_URL and ADMIN_TOKEN).",
    );
    this.name = "DataDirInUseError";
  }
}
