/**
 * Refusals of a second process on a store already owned. Until the credit-lease ledger exists (issue 15), the
 * serving process keeps balances and holds in memory and is the single writer of its store, so a second
 * gateway (or a direct-mode admin CLI) would hold credit the first one does not see.
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

/** The Postgres single-writer advisory lock is held. `where` names the database without its password. */
export class DatabaseInUseError extends StoreInUseError {
  constructor(where: string) {
    super(
      `DATABASE_URL ${where} is in use by another gateway or admin process (it holds the store's ` +
        "single-writer advisory lock); until the credit-lease ledger is built, only one process may serve " +
        "one Postgres store. Stop it, or go through the running gateway (GATEWAY_URL and ADMIN_TOKEN).",
    );
    this.name = "DatabaseInUseError";
  }
}
