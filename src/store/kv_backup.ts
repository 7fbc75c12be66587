/**
 * Backup and restore on Deno KV (store.ts BackupStore). KV has no snapshot of many reads, so the store's own
 * writes of money and identity go through a WriteGate (kv_store.ts) and a snapshot runs with them held.
 */
import { kvKeys } from "./kv_keys.ts";
import { writeEntry, writePayment } from "./kv_payments.ts";
import { MAX_MUTATIONS } from "./kv_atomic.ts";
import type { BackupStore, SnapshotReads } from "./store.ts";
import type { KeyOwner, LedgerEntry, Payment } from "./shop_types.ts";
import type { WriteGate } from "./write_gate.ts";

/** The store methods that write what a snapshot holds: they wait while one is read. */
export const SNAPSHOT_GUARDED = [
  "commit",
  "createKey",
  "updateKey",
  "putTariff",
  "putFile",
  "deleteFile",
  "createPackage",
  "updatePackage",
  "updatePaymentMethod",
  "updateKeyOwner",
  "rotateKeyHash",
  "createPayment",
  "cancelPayment",
  "settlePayment",
  "refundPayment",
  "creditKey",
] as const;

/** Prefixes whose any entry makes a store not empty for a restore. */
const RESTORED_PREFIXES: Deno.KvKey[] = [
  kvKeys.keyPrefix(),
  kvKeys.usageRowsPrefix(),
  ["ledger_entry"],
  kvKeys.shopPackagePrefix(),
  ["payment"],
  kvKeys.keyOwnerPrefix(),
  ["file"],
];

/** Writes per atomic of a restore: a payment is 5 writes, well within KV's limits. */
const CHUNK = Math.floor(MAX_MUTATIONS / 5);

export class KvBackup implements BackupStore {
  constructor(
    private readonly kv: Deno.Kv,
    private readonly gate: WriteGate,
    private readonly view: SnapshotReads,
  ) {}

  readSnapshot<T>(read: (view: SnapshotReads) => Promise<T>): Promise<T> {
    return this.gate.snapshot(() => read(this.view));
  }

  async isEmptyForRestore(): Promise<boolean> {
    for (const prefix of RESTORED_PREFIXES) {
      for await (const _ of this.kv.list({ prefix }, { limit: 1 })) return false;
    }
    return true;
  }

  restoreLedgerEntries(entries: readonly LedgerEntry[]): Promise<void> {
    return this.#inChunks(entries, (op, e) => writeEntry(op, e));
  }

  restorePayments(payments: readonly Payment[]): Promise<void> {
    return this.#inChunks(payments, (op, p) => {
      writePayment(op, p);
      if (p.telegramChargeId !== null) op.set(kvKeys.paymentCharge(p.telegramChargeId), p.id);
    });
  }

  restoreKeyOwners(owners: readonly KeyOwner[]): Promise<void> {
    return this.#inChunks(owners, (op, o) => {
      op.set(kvKeys.keyOwner(o.keyId), o).set(kvKeys.chatKey(o.chatId, o.keyId), null);
    });
  }

  async #inChunks<T>(items: readonly T[], write: (op: Deno.AtomicOperation, item: T) => void): Promise<void> {
    for (let i = 0; i < items.length; i += CHUNK) {
      const op = this.kv.atomic();
      for (const item of items.slice(i, i + CHUNK)) write(op, item);
      if (!(await op.commit()).ok) throw new Error("kv restore: a write failed");
    }
  }
}
