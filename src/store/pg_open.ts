/** Opens the Postgres store (loaded on demand by open.ts); outages become StoreUnavailableError. Any number of
 *  processes may serve one Postgres store: money goes through credit leases (src/accounts/lease_ledger.ts). */
import { isPgOutage } from "./pg_outage.ts";
import { PgStore } from "./pg_store.ts";
import type { Store } from "./store.ts";
import { guardStore } from "./unavailable.ts";
import type { Logger } from "../util/log.ts";

export async function openPgStore(url: string, log: Logger): Promise<Store> {
  return guardStore(await PgStore.open(url, log), isPgOutage);
}
