/** Opens the store named by the configuration. Shared by the gateway and the direct-mode admin CLI. */
import type { Config } from "../config/env.ts";
import { KvStore } from "./kv_store.ts";

/** Unset DATABASE_URL: Deno KV file `${DATA_DIR}/gateway.kv`; "memory": in-memory KV (tests). */
export async function openStore(config: Config): Promise<KvStore> {
  if (config.DATABASE_URL === "memory") return KvStore.open(":memory:");
  if (config.DATABASE_URL !== undefined) {
    throw new Error("DATABASE_URL: only unset (Deno KV file) or 'memory' is supported by this build");
  }
  await Deno.mkdir(config.DATA_DIR, { recursive: true });
  return KvStore.open(`${config.DATA_DIR}/gateway.kv`);
}
