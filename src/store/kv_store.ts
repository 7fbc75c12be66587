import type { TariffRow } from "../billing/tariff_seed.ts";
import type { Store, UsagePage } from "./store.ts";
import type { CommitBatch, KeyRecord, UsageRow } from "./types.ts";
import { kvKeys } from "./kv_keys.ts";

/** Deno KV limits one atomic operation to 1000 mutations; batches larger than this are split. */
const MAX_MUTATIONS = 900;

export class KvStore implements Store {
  constructor(private readonly kv: Deno.Kv) {}

  static async open(path: string | undefined): Promise<KvStore> {
    return new KvStore(await Deno.openKv(path));
  }

  async listKeys(): Promise<KeyRecord[]> {
    const out: KeyRecord[] = [];
    for await (const e of this.kv.list<KeyRecord>({ prefix: kvKeys.keyPrefix() })) out.push(e.value);
    return out;
  }

  async getKey(id: string): Promise<KeyRecord | null> {
    return (await this.kv.get<KeyRecord>(kvKeys.key(id))).value;
  }

  async createKey(rec: KeyRecord): Promise<void> {
    const res = await this.kv.atomic()
      .check({ key: kvKeys.key(rec.id), versionstamp: null })
      .check({ key: kvKeys.keyByHash(rec.hash), versionstamp: null })
      .set(kvKeys.key(rec.id), rec)
      .set(kvKeys.keyByHash(rec.hash), rec.id)
      .commit();
    if (!res.ok) throw new Error("key already exists");
  }

  async commit(batch: CommitBatch): Promise<void> {
    const entries: [Deno.KvKey, unknown][] = [
      ...batch.keys.map((k): [Deno.KvKey, unknown] => [kvKeys.key(k.id), k]),
      ...batch.usage.map((u): [Deno.KvKey, unknown] => [kvKeys.usage(u.keyId, u.createdAt, u.requestId), u]),
    ];
    for (let i = 0; i < entries.length; i += MAX_MUTATIONS) {
      const op = this.kv.atomic();
      for (const [k, v] of entries.slice(i, i + MAX_MUTATIONS)) op.set(k, v);
      const res = await op.commit();
      if (!res.ok) throw new Error("kv commit failed");
    }
  }

  async listUsage(keyId: string, opts: { limit: number; after?: string }): Promise<UsagePage> {
    const iter = this.kv.list<UsageRow>(
      { prefix: kvKeys.usagePrefix(keyId) },
      opts.after ? { limit: opts.limit, cursor: opts.after } : { limit: opts.limit },
    );
    const rows: UsageRow[] = [];
    const cursors: string[] = [];
    for await (const e of iter) {
      rows.push(e.value);
      cursors.push(iter.cursor);
    }
    return rows.length === opts.limit && iter.cursor
      ? { rows, cursors, next: iter.cursor }
      : { rows, cursors };
  }

  async getTariff(): Promise<TariffRow[] | null> {
    return (await this.kv.get<TariffRow[]>(kvKeys.tariff())).value;
  }

  async putTariff(rows: TariffRow[]): Promise<void> {
    await this.kv.set(kvKeys.tariff(), rows);
  }

  close(): void {
    this.kv.close();
  }
}
