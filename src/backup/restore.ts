/**
 * Writes a checked backup (reader.ts) into an empty store (docs/backup.md): keys with their money as it was
 * (createKey sets the counters), their ledger entries, owners and payments as they were, usage rows through the
 * group commit with no money (so the hourly sums are rebuilt from the rows, as the commit keeps them), live files
 * with their sections, the shop's packages and payment methods and the tariff. A file's usage hours are not
 * written: the rows rebuild them. Files expired by `now` are left out.
 */
import type { Store } from "../store/store.ts";
import type { KeyOwner, LedgerEntry, Payment } from "../store/shop_types.ts";
import type { UsageRow } from "../store/types.ts";
import type { BackupRecord } from "./records.ts";

/** Records written per store call. */
const CHUNK = 500;
/** A restored file's quota check never refuses it: its key's quota held it when it was stored. */
const NO_QUOTA = { maxFiles: Number.MAX_SAFE_INTEGER, maxBytes: Number.MAX_SAFE_INTEGER };

export class StoreNotEmptyError extends Error {
  override name = "StoreNotEmptyError";
  constructor(store: string) {
    super(`${store} is not empty: a backup is restored only into an empty store (nothing was written)`);
  }
}

export interface RestoreResult {
  /** Records written by type (usage hours are rebuilt, not counted). */
  written: Record<string, number>;
  /** Files left out because they expired before the restore. */
  expiredFiles: number;
}

export async function restoreBackup(
  store: Store,
  records: AsyncIterable<BackupRecord>,
  now: number,
): Promise<RestoreResult> {
  const written: Record<string, number> = {};
  const count = (t: string, n = 1) => written[t] = (written[t] ?? 0) + n;
  let expiredFiles = 0;
  const ledger = new Batch<LedgerEntry>((xs) => store.restoreLedgerEntries(xs));
  const owners = new Batch<KeyOwner>((xs) => store.restoreKeyOwners(xs));
  const payments = new Batch<Payment>((xs) => store.restorePayments(xs));
  let commits = 0;
  const usage = new Batch<UsageRow>((rows) =>
    store.commit({ id: `restore-${now}-${commits++}`, money: [], usage: rows })
  );
  for await (const rec of records) {
    switch (rec.t) {
      case "tariff":
        await store.putTariff(rec.rows);
        break;
      case "payment_method": {
        const { t: _, id, ...patch } = rec;
        if (await store.updatePaymentMethod(id, patch) === null) {
          throw new Error(`unknown payment method ${id}`);
        }
        break;
      }
      case "package": {
        const { t: _, ...p } = rec;
        await store.createPackage(p);
        break;
      }
      case "key": {
        const { t: _, ...key } = rec;
        await store.createKey({ ...key, balance: key.credited - key.spent });
        break;
      }
      case "ledger": {
        const { t: _, ...e } = rec;
        await ledger.add(e);
        break;
      }
      case "owner": {
        const { t: _, ...o } = rec;
        await owners.add(o);
        break;
      }
      case "usage": {
        const { t: _, ...row } = rec;
        await usage.add(row);
        break;
      }
      case "usage_hour":
        continue; // rebuilt by the commits of the rows
      case "file": {
        const { t: _, data, sections, ...file } = rec;
        if (file.expiresAt <= now) {
          expiredFiles++;
          continue;
        }
        const sectionsJson = new TextEncoder().encode(JSON.stringify(sections));
        if (await store.putFile(file, Uint8Array.fromBase64(data), sectionsJson, NO_QUOTA) !== "ok") {
          throw new Error(`file ${file.id} was refused`);
        }
        break;
      }
      case "payment": {
        const { t: _, ...p } = rec;
        await payments.add(p);
        break;
      }
    }
    count(rec.t);
  }
  for (const b of [ledger, owners, usage, payments]) await b.flush();
  return { written, expiredFiles };
}

/** Records collected and written CHUNK at a time. */
class Batch<T> {
  #items: T[] = [];
  constructor(private readonly write: (items: T[]) => Promise<unknown>) {}

  async add(item: T): Promise<void> {
    this.#items.push(item);
    if (this.#items.length >= CHUNK) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.#items.length === 0) return;
    const items = this.#items;
    this.#items = [];
    await this.write(items);
  }
}
