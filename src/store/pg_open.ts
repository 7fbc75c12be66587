/** Opens the Postgres store (loaded on demand by open.ts): the single-writer lock first, so a refused process never migrates a store another one serves; outages become StoreUnavailableError. */
import { lockStore } from "./pg_connect.ts";
import { isPgOutage } from "./pg_outage.ts";
import { PgStore } from "./pg_store.ts";
import type { Store } from "./store.ts";
import { guardStore } from "./unavailable.ts";

export async function openPgStore(url: string): Promise<Store> {
  const release = await lockStore(url);
  try {
    return guardStore(await PgStore.open(url, release), isPgOutage);
  } catch (err) {
    await release();
    throw err;
  }
}
