/** The key table over the configured store: one process's own (in-memory ledger) or a shared one (leases). */
import type { Config } from "../config/env.ts";
import { isSharedStore } from "../store/open.ts";
import type { Store } from "../store/store.ts";
import { Accounts } from "./accounts.ts";
import { LeaseLedger } from "./lease_ledger.ts";
import type { Logger } from "../util/log.ts";

export async function openAccounts(config: Config, store: Store, log: Logger): Promise<Accounts> {
  if (!isSharedStore(config)) return await Accounts.load(store, log);
  const ledger = new LeaseLedger(store, {
    holder: newHolderId(),
    ttlMs: config.LEASE_TTL_MS,
    idleMs: config.LEASE_IDLE_MS,
    commitIntervalMs: 5,
    log,
  });
  try {
    return await Accounts.loadShared(store, { ledger, refreshMs: config.KEY_REFRESH_MS, log });
  } catch (err) {
    await ledger.close();
    throw err;
  }
}

/** A process's lease holder id: random, so a restarted process never inherits a dead one's leases. */
function newHolderId(): string {
  return `h_${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;
}
