/** Key records on Deno KV (store.ts KeyStore): metadata in one value, money in counters (kv_money.ts). */
import type { KeyStore } from "./store.ts";
import type { KeyMeta, KeyRecord } from "./types.ts";
import type { LedgerEntry } from "./shop_types.ts";
import { compose, foldMoney, isLegacy, metaOf, moneyKeys, sumLimbs, withNewFields } from "./kv_money.ts";
import { markChanged, writeNewKey } from "./kv_key_writes.ts";
import { writeEntry } from "./kv_payments.ts";
import { kvKeys } from "./kv_keys.ts";
import { commitChecked, isLockedError, optimistic } from "./kv_atomic.ts";
import { migrateLegacyKey } from "./kv_key_migration.ts";
import type { Logger } from "../util/log.ts";

export class KvKeyRecords implements KeyStore {
  constructor(private readonly kv: Deno.Kv, private readonly log: Logger) {}

  /** Every key, money summed from its counters. Records of the older format (money inside the record) are
   *  migrated here, each in one atomic write guarded by its versionstamp, keeping the same money. */
  async listKeys(): Promise<KeyRecord[]> {
    const metas: KeyMeta[] = [];
    for await (const e of this.kv.list<KeyMeta | KeyRecord>({ prefix: kvKeys.keyPrefix() })) {
      metas.push(
        isLegacy(e.value) ? await migrateLegacyKey(this.kv, this.log, e as Deno.KvEntry<KeyRecord>) : e.value,
      );
    }
    const money = new Map<string, { spent: bigint; credited: bigint }>();
    for await (const e of this.kv.list<Deno.KvU64>({ prefix: kvKeys.moneyPrefix() })) foldMoney(money, e);
    return metas.map((m) => compose(m, money.get(m.id)));
  }

  /** Metadata and counters in one read. */
  async getKey(id: string): Promise<KeyRecord | null> {
    const [meta, ...limbs] = await this.kv.getMany<[KeyMeta | KeyRecord, ...Deno.KvU64[]]>([
      kvKeys.key(id),
      ...moneyKeys(id),
    ]);
    if (meta.value === null) return null;
    if (isLegacy(meta.value)) return withNewFields(meta.value);
    return compose(meta.value, sumLimbs(id, limbs as Deno.KvEntryMaybe<Deno.KvU64>[]));
  }

  async getKeyByHash(hash: string): Promise<KeyRecord | null> {
    const id = (await this.kv.get<string>(kvKeys.keyByHash(hash))).value;
    return id === null ? null : this.getKey(id);
  }

  async keyChanges(since: number): Promise<KeyRecord[]> {
    const ids = new Set<string>();
    const prefix = kvKeys.keyChangePrefix();
    for await (const e of this.kv.list({ prefix, start: [...prefix, since] })) ids.add(e.key[2] as string);
    const recs = await Promise.all([...ids].map((id) => this.getKey(id)));
    return recs.filter((r) => r !== null);
  }

  async createKey(rec: KeyRecord, entry?: LedgerEntry): Promise<void> {
    const write = () => {
      const op = this.kv.atomic();
      writeNewKey(op, rec);
      if (entry) writeEntry(op, entry);
      return op.commit();
    };
    // A lock lost to another process's write on a shared KV file is retried; a check that finds the id or the
    // hash taken is the answer.
    const created = await optimistic("createKey", async () => {
      try {
        return { value: (await write()).ok };
      } catch (err) {
        if (isLockedError(err)) return null;
        throw err;
      }
    });
    if (!created) throw new Error("key already exists");
  }

  /** The stored hash and hint are kept (they change only by rotateKeyHash): written under a check of the
   *  record read, so a rotation in between makes it read again. */
  async updateKey(meta: KeyMeta): Promise<void> {
    await optimistic("updateKey", async () => {
      const e = await this.kv.get<KeyMeta | KeyRecord>(kvKeys.key(meta.id));
      const kept = e.value === null ? {} : { hash: e.value.hash, hint: e.value.hint };
      const op = this.kv.atomic().check(e).set(kvKeys.key(meta.id), { ...metaOf(meta), ...kept });
      markChanged(op, meta.id);
      return await commitChecked(op) ? { value: undefined } : null;
    });
  }
}
