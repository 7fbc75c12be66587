/**
 * The store on Deno KV: one object per capability (store.ts), each in its own module, composed (compose.ts).
 * Several processes may share one KV file: every read-check-write goes through kv_atomic.ts.
 */
import type { Store } from "./store.ts";
import { bindCapabilities } from "./compose.ts";
import { KvKeyRecords } from "./kv_key_records.ts";
import { KvLedger } from "./kv_ledger.ts";
import { KvUsage } from "./kv_usage.ts";
import { KvTariff } from "./kv_tariff.ts";
import { KvFiles } from "./kv_files.ts";
import { KvSessions } from "./kv_sessions.ts";
import { KvShop } from "./kv_shop.ts";
import { KvPayments } from "./kv_payments.ts";
import { KvDocuments } from "./kv_documents.ts";
import { KvExpiringSets } from "./kv_expiring_sets.ts";
import { KvCounters } from "./kv_counters.ts";
import { KvIdempotency } from "./kv_idempotency.ts";
import { KV_MIGRATIONS, type KvMigration, migrateKv } from "./kv_format.ts";
import { KvBackup, SNAPSHOT_GUARDED } from "./kv_backup.ts";
import { WriteGate } from "./write_gate.ts";
import { Logger } from "../util/log.ts";

/** Every capability's methods, bound from its object (compose.ts). */
export interface KvStore extends Store {}

export class KvStore {
  readonly #stopWatches: () => void;

  /** `log`: where the document watch's failures and a migration's mismatch go (the gateway's; a store opened by
   *  hand, in a test or a bench, logs warnings and errors to stdout). */
  constructor(
    private readonly kv: Deno.Kv,
    log: Logger = new Logger("warn"),
    private readonly onClose: () => void = () => {},
  ) {
    const documents = new KvDocuments(kv, log);
    this.#stopWatches = documents.stopWatches;
    const gate = new WriteGate();
    bindCapabilities(this, [
      new KvKeyRecords(kv, log),
      new KvLedger(kv, log),
      new KvUsage(kv),
      new KvTariff(kv),
      new KvFiles(kv),
      new KvSessions(kv),
      new KvShop(kv),
      new KvPayments(kv),
      documents,
      new KvExpiringSets(kv),
      new KvCounters(kv),
      new KvIdempotency(kv),
      new KvBackup(kv, gate, this),
    ]);
    gate.guard(this, SNAPSHOT_GUARDED);
  }

  /** Brings the store to this build's format first, or refuses a newer one (kv_format.ts; StoreFormatError).
   *  `onClose` runs after the KV handle is closed (open.ts releases the DATA_DIR lock there). `migrations`:
   *  this build's (a test adds one to play a newer build). */
  static async open(
    path: string | undefined,
    log: Logger = new Logger("warn"),
    onClose?: () => void,
    migrations: readonly KvMigration[] = KV_MIGRATIONS,
  ): Promise<KvStore> {
    const kv = await Deno.openKv(path);
    try {
      // Before any commit adds to the hourly counters (the backfill sets them).
      const applied = await migrateKv(kv, `the Deno KV store ${path ?? "of Deno Deploy"}`, migrations);
      if (applied.length > 0) log.info("store migrated", { format: applied.at(-1), applied });
    } catch (err) {
      kv.close();
      throw err;
    }
    return new KvStore(kv, log, onClose);
  }

  close(): Promise<void> {
    this.#stopWatches();
    this.kv.close();
    this.onClose();
    return Promise.resolve();
  }
}
