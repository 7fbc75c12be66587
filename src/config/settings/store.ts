/** Store settings: where keys, balances, usage and files are kept. */
import { z } from "zod";

export const store = {
  DATABASE_URL: z.string().regex(
    /^(memory|postgres(ql)?:\/\/.+|kv:.*)$/,
    "expected 'memory', a postgres:// URL or kv:<path or URL>",
  ).optional().describe(
    "The store. Unset: a Deno KV file at `DATA_DIR/gateway.kv`, one gateway process. `memory`: " +
      "in-memory KV, lost on exit, for tests only: every usage row stays in the process's memory, so its RSS " +
      "grows with traffic (about 400 MiB after minutes of load). `postgres://user:password@host:5432/db`: Postgres, " +
      "migrated at start-up. `kv:<path or KV Connect URL>` (`kv:` alone on Deno Deploy): a shared " +
      "Deno KV. Postgres and kv: serve any number of gateway processes (docs/ledger_leases.md).",
  ),
  DATA_DIR: z.string().min(1).default("./data").describe(
    "Directory of the KV file store, created if missing; one gateway process per directory, the " +
      "single writer. Default ./data.",
  ),
};
