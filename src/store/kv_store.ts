import type { TariffRow } from "../catalog/tariff_seed.ts";
import type {
  FileQuota,
  FileSection,
  PutFileResult,
  Store,
  StoredFile,
  ToolLoop,
  ToolLoopChange,
  UsagePage,
} from "./store.ts";
import type { CommitBatch, KeyMeta, KeyRecord, UsageRow } from "./types.ts";
import { addMoney, compose, foldMoney, isLegacy, legacyMoney, metaOf, moneyMutations } from "./kv_money.ts";
import { kvKeys } from "./kv_keys.ts";
import { concatBytes } from "../util/bytes.ts";

/** Deno KV limits one atomic operation to 1000 mutations; batches larger than this are split. */
const MAX_MUTATIONS = 900;
/** A KV value holds at most 64 KiB: file bytes and serialized sections are cut into chunks of this size. */
const FILE_CHUNK_BYTES = 60_000;
/** Chunks per atomic write (Deno KV caps the total size of one atomic operation at 800 KiB). */
const CHUNKS_PER_COMMIT = 10;

interface QuotaEntry {
  id: string;
  storedBytes: number;
  expiresAt: number;
}
interface QuotaRecord {
  files: QuotaEntry[];
}

export class KvStore implements Store {
  constructor(private readonly kv: Deno.Kv, private readonly onClose: () => void = () => {}) {}

  /** `onClose` runs after the KV handle is closed (open.ts releases the DATA_DIR lock there). */
  static async open(path: string | undefined, onClose?: () => void): Promise<KvStore> {
    return new KvStore(await Deno.openKv(path), onClose);
  }

  /** Every key, money summed from its counters. Records of the older format (money inside the record) are
   *  migrated here, each in one atomic write guarded by its versionstamp, keeping the same money. */
  async listKeys(): Promise<KeyRecord[]> {
    const metas: KeyMeta[] = [];
    for await (const e of this.kv.list<KeyMeta | KeyRecord>({ prefix: kvKeys.keyPrefix() })) {
      metas.push(isLegacy(e.value) ? await this.#migrate(e as Deno.KvEntry<KeyRecord>) : e.value);
    }
    const money = new Map<string, { spent: bigint; credited: bigint }>();
    for await (const e of this.kv.list<Deno.KvU64>({ prefix: kvKeys.moneyPrefix() })) foldMoney(money, e);
    return metas.map((m) => compose(m, money.get(m.id)));
  }

  async getKey(id: string): Promise<KeyRecord | null> {
    const meta = (await this.kv.get<KeyMeta | KeyRecord>(kvKeys.key(id))).value;
    if (meta === null || isLegacy(meta)) return meta;
    const money = new Map<string, { spent: bigint; credited: bigint }>();
    for await (const e of this.kv.list<Deno.KvU64>({ prefix: kvKeys.keyMoneyPrefix(id) })) {
      foldMoney(money, e);
    }
    return compose(meta, money.get(id));
  }

  async createKey(rec: KeyRecord): Promise<void> {
    const op = this.kv.atomic()
      .check({ key: kvKeys.key(rec.id), versionstamp: null })
      .check({ key: kvKeys.keyByHash(rec.hash), versionstamp: null })
      .set(kvKeys.key(rec.id), metaOf(rec))
      .set(kvKeys.keyByHash(rec.hash), rec.id);
    addMoney(op, rec.id, "credited", rec.credited);
    addMoney(op, rec.id, "spent", rec.spent);
    const res = await op.commit();
    if (!res.ok) throw new Error("key already exists");
  }

  async updateKey(meta: KeyMeta): Promise<void> {
    await this.kv.set(kvKeys.key(meta.id), metaOf(meta));
  }

  async commit(batch: CommitBatch): Promise<void> {
    // Money first and the settled checkpoints right after it, so a checkpoint is never deleted without its
    // balance change nor kept beside it (a batch splits only past 900 mutations).
    const entries: ((op: Deno.AtomicOperation) => void)[] = [];
    const weights: number[] = [];
    const add = (n: number, fn: (op: Deno.AtomicOperation) => void) => (entries.push(fn), weights.push(n));
    for (const d of batch.money) {
      add(moneyMutations(d.spent) + moneyMutations(d.credited), (op) => {
        addMoney(op, d.keyId, "spent", d.spent);
        addMoney(op, d.keyId, "credited", d.credited);
      });
    }
    for (const id of batch.closed ?? []) add(1, (op) => op.delete(kvKeys.open(id)));
    for (const u of batch.usage) add(1, (op) => op.set(kvKeys.usage(u.keyId, u.createdAt, u.requestId), u));
    for (const u of batch.open ?? []) add(1, (op) => op.set(kvKeys.open(u.requestId), u));
    let op = this.kv.atomic();
    let n = 0;
    for (let i = 0; i < entries.length; i++) {
      if (n > 0 && n + weights[i]! > MAX_MUTATIONS) {
        if (!(await op.commit()).ok) throw new Error("kv commit failed");
        op = this.kv.atomic();
        n = 0;
      }
      entries[i]!(op);
      n += weights[i]!;
    }
    if (n > 0 && !(await op.commit()).ok) throw new Error("kv commit failed");
  }

  /** Rewrites a record of the older format as metadata + counters; another process migrating it first wins. */
  async #migrate(e: Deno.KvEntry<KeyRecord>): Promise<KeyMeta> {
    const money = legacyMoney(e.value);
    if (money.credited !== e.value.credited) {
      console.warn(`key ${e.value.id}: stored credited ${e.value.credited} != balance + spent; balance kept`);
    }
    const op = this.kv.atomic().check(e).set(e.key, metaOf(e.value));
    addMoney(op, e.value.id, "credited", money.credited);
    addMoney(op, e.value.id, "spent", money.spent);
    await op.commit(); // not ok: migrated meanwhile by another process, whose counters the caller reads
    return metaOf(e.value);
  }

  async listOpen(): Promise<UsageRow[]> {
    const out: UsageRow[] = [];
    for await (const e of this.kv.list<UsageRow>({ prefix: kvKeys.openPrefix() })) out.push(e.value);
    return out;
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

  async putFile(
    file: StoredFile,
    data: Uint8Array,
    sectionsJson: Uint8Array,
    quota: FileQuota,
  ): Promise<PutFileResult> {
    if (!(await this.#takeQuota(file, quota))) return "quota_exceeded";
    try {
      await this.#writeChunks(file, "data", data);
      await this.#writeChunks(file, "sections", sectionsJson);
      // The metadata goes last: until it exists the file is invisible, so nothing is ever half-stored.
      await this.kv.set(kvKeys.file(file.keyId, file.id), file, { expireIn: expireIn(file) });
      return "ok";
    } catch (err) {
      await this.#deleteChunks(file.id).catch(() => {});
      await this.#releaseQuota(file.keyId, file.id).catch(() => {});
      throw err;
    }
  }

  async getFile(keyId: string, id: string, now: number): Promise<StoredFile | null> {
    const rec = (await this.kv.get<StoredFile>(kvKeys.file(keyId, id))).value;
    return rec && rec.expiresAt > now ? rec : null;
  }

  async listFiles(keyId: string, now: number): Promise<StoredFile[]> {
    const out: StoredFile[] = [];
    const expired: StoredFile[] = [];
    for await (const e of this.kv.list<StoredFile>({ prefix: kvKeys.filePrefix(keyId) })) {
      (e.value.expiresAt > now ? out : expired).push(e.value);
    }
    // Sweep what KV has not expired yet (expireIn is a lower bound, not a deadline).
    for (const f of expired) await this.deleteFile(keyId, f.id).catch(() => {});
    return out.sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
  }

  getFileData(file: StoredFile): Promise<Uint8Array> {
    return this.#readChunks(file.id, "data");
  }

  async getFileSections(file: StoredFile): Promise<FileSection[]> {
    const bytes = await this.#readChunks(file.id, "sections");
    return bytes.byteLength === 0 ? [] : JSON.parse(new TextDecoder().decode(bytes)) as FileSection[];
  }

  async deleteFile(keyId: string, id: string): Promise<boolean> {
    const metaKey = kvKeys.file(keyId, id);
    const meta = await this.kv.get<StoredFile>(metaKey);
    if (meta.value === null) return false;
    for (;;) {
      const q = await this.kv.get<QuotaRecord>(kvKeys.fileQuota(keyId));
      const op = this.kv.atomic().check(meta).check(q).delete(metaKey);
      if (q.value) op.set(kvKeys.fileQuota(keyId), { files: q.value.files.filter((f) => f.id !== id) });
      const res = await op.commit();
      if (res.ok) break;
      // A concurrent delete of the same file wins; anything else (a parallel upload) retries.
      if ((await this.kv.get(metaKey)).value === null) return false;
    }
    await this.#deleteChunks(id);
    return true;
  }

  /** Adds the file to the key's quota record if it fits; an optimistic loop on the record's versionstamp. */
  async #takeQuota(file: StoredFile, quota: FileQuota): Promise<boolean> {
    const key = kvKeys.fileQuota(file.keyId);
    for (;;) {
      const q = await this.kv.get<QuotaRecord>(key);
      const live = (q.value?.files ?? []).filter((f) => f.expiresAt > file.createdAt);
      const used = live.reduce((n, f) => n + f.storedBytes, 0);
      if (live.length + 1 > quota.maxFiles || used + file.storedBytes > quota.maxBytes) return false;
      const files = [...live, { id: file.id, storedBytes: file.storedBytes, expiresAt: file.expiresAt }];
      const res = await this.kv.atomic().check(q).set(key, { files }, { expireIn: expireIn(file) }).commit();
      if (res.ok) return true;
    }
  }

  async #releaseQuota(keyId: string, id: string): Promise<void> {
    const key = kvKeys.fileQuota(keyId);
    for (;;) {
      const q = await this.kv.get<QuotaRecord>(key);
      if (!q.value) return;
      const res = await this.kv.atomic().check(q).set(key, {
        files: q.value.files.filter((f) => f.id !== id),
      })
        .commit();
      if (res.ok) return;
    }
  }

  async #writeChunks(file: StoredFile, part: "data" | "sections", bytes: Uint8Array): Promise<void> {
    const count = Math.ceil(bytes.byteLength / FILE_CHUNK_BYTES);
    for (let i = 0; i < count; i += CHUNKS_PER_COMMIT) {
      const op = this.kv.atomic();
      for (let n = i; n < Math.min(count, i + CHUNKS_PER_COMMIT); n++) {
        const chunk = bytes.slice(n * FILE_CHUNK_BYTES, (n + 1) * FILE_CHUNK_BYTES);
        op.set(kvKeys.fileChunk(file.id, part, n), chunk, { expireIn: expireIn(file) });
      }
      if (!(await op.commit()).ok) throw new Error("kv chunk write failed");
    }
  }

  async #readChunks(id: string, part: "data" | "sections"): Promise<Uint8Array> {
    const chunks: Uint8Array[] = [];
    for await (const e of this.kv.list<Uint8Array>({ prefix: [...kvKeys.fileChunkPrefix(id), part] })) {
      chunks.push(e.value);
    }
    return chunks.length === 0 ? new Uint8Array(0) : concatBytes(chunks);
  }

  async #deleteChunks(id: string): Promise<void> {
    let op = this.kv.atomic();
    let n = 0;
    for await (const e of this.kv.list({ prefix: kvKeys.fileChunkPrefix(id) })) {
      op.delete(e.key);
      if (++n % 500 === 0) {
        await op.commit();
        op = this.kv.atomic();
      }
    }
    await op.commit();
  }

  async listToolLoops(keyId: string, now: number): Promise<ToolLoop[]> {
    const out: ToolLoop[] = [];
    // expireIn is a lower bound, not a deadline: a loop past its expiresAt may still be listed by KV.
    for await (const e of this.kv.list<ToolLoop>({ prefix: kvKeys.toolLoopPrefix(keyId) })) {
      if (e.value.expiresAt > now) out.push(e.value);
    }
    return out.sort((a, b) => a.expiresAt - b.expiresAt || a.id.localeCompare(b.id));
  }

  async updateToolLoops(keyId: string, change: ToolLoopChange): Promise<void> {
    const op = this.kv.atomic();
    const loop = change.open;
    for (const id of change.close) if (id !== loop?.id) op.delete(kvKeys.toolLoop(keyId, id));
    // The store's own expiry: the loop's lifetime from its last answer (its record keeps the exact time).
    if (loop) op.set(kvKeys.toolLoop(keyId, loop.id), loop, { expireIn: lifetime(loop) });
    if (!(await op.commit()).ok) throw new Error("kv tool loop write failed");
  }

  close(): Promise<void> {
    this.kv.close();
    this.onClose();
    return Promise.resolve();
  }
}

/** A tool loop's lifetime from its last answer, for KV `expireIn` (at least 1). */
function lifetime(loop: ToolLoop): number {
  return Math.max(1, loop.expiresAt - loop.updatedAt);
}

/** Milliseconds until the file's expiry, for KV `expireIn` (at least 1). */
function expireIn(file: StoredFile): number {
  return Math.max(1, file.expiresAt - Date.now());
}
