/**
 * What a backup holds, read from one consistent view of the store (store.ts BackupStore.readSnapshot): the
 * tariff, the shop's payment methods and packages, then key by key its record with its money, its ledger
 * entries, its owner, its usage rows and hours and its live files, then the payments. Holds are not stored
 * (src/accounts/ledger.ts), so a snapshot has none: every key's balance is credited − spent.
 */
import type { SnapshotReads } from "../store/store.ts";
import type { BackupRecord } from "./records.ts";

/** Usage rows read per page. */
const PAGE = 1_000;
const HOUR_MS = 3_600_000;

export async function readSnapshotRecords(
  view: SnapshotReads,
  now: number,
  emit: (rec: BackupRecord) => Promise<void>,
): Promise<void> {
  const tariff = await view.getTariff(); // null: never stored (the gateway seeds it at start)
  if (tariff !== null) await emit({ t: "tariff", rows: tariff });
  for (const m of await view.listPaymentMethods()) await emit({ t: "payment_method", ...m });
  for (const p of await view.listPackages()) await emit({ t: "package", ...p });
  const owners = new Map((await view.listKeyOwners()).map((o) => [o.keyId, o]));
  for (const { balance: _, ...key } of await view.listKeys()) {
    await emit({ t: "key", ...key });
    for (const e of await view.listLedger(key.id)) await emit({ t: "ledger", ...e });
    const owner = owners.get(key.id);
    if (owner) await emit({ t: "owner", ...owner });
    let after: string | undefined;
    do {
      const page = await view.listUsage(key.id, { limit: PAGE, after });
      for (const row of page.rows) await emit({ t: "usage", ...row });
      after = page.next;
    } while (after !== undefined);
    // Every hour up to the one after now's: a row's hour is its createdAt's, never later than now by much.
    for (const h of await view.usageHours(key.id, 0, (Math.floor(now / HOUR_MS) + 2) * HOUR_MS)) {
      await emit({ t: "usage_hour", keyId: key.id, ...h });
    }
    for (const f of await view.listFiles(key.id, now)) {
      const [data, sections] = [await view.getFileData(f), await view.getFileSections(f)];
      await emit({ t: "file", ...f, data: data.toBase64(), sections });
    }
  }
  for (const p of await view.listPayments({ limit: Number.MAX_SAFE_INTEGER })) {
    await emit({ t: "payment", ...p });
  }
}
