/**
 * Uploaded files in Deno KV (store.ts FileStore, spec §8.2): metadata per key, bytes and
 * serialised sections in chunks, and a per-key quota record taken and released atomically. Read-check-writes
 * go through kv_atomic.ts, so several processes on one KV file stay exact.
 */
import type { FileQuota, FileSection, FileStore, PutFileResult, StoredFile } from "./store.ts";
import { commitChecked } from "./kv_atomic.ts";
import { kvKeys } from "./kv_keys.ts";
import { deleteChunks, readChunks, writeChunks } from "./kv_chunks.ts";

interface QuotaEntry {
  id: string;
  storedBytes: number;
  expiresAt: number;
}
interface QuotaRecord {
  files: QuotaEntry[];
}

export class KvFiles implements FileStore {
  constructor(private readonly kv: Deno.Kv) {}

  async putFile(
    file: StoredFile,
    data: Uint8Array,
    sectionsJson: Uint8Array,
    quota: FileQuota,
  ): Promise<PutFileResult> {
    if (!(await this.#takeQuota(file, quota))) return "quota_exceeded";
    try {
      await writeChunks(this.kv, kvKeys.fileChunks(file.id, "data"), data, file.expiresAt);
      await writeChunks(this.kv, kvKeys.fileChunks(file.id, "sections"), sectionsJson, file.expiresAt);
      // The metadata goes last: until it exists the file is invisible, so nothing is ever half-stored.
      await this.kv.set(kvKeys.file(file.keyId, file.id), file, { expireIn: expireIn(file) });
      return "ok";
    } catch (err) {
      await deleteChunks(this.kv, kvKeys.fileChunkPrefix(file.id)).catch(() => {});
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
    return readChunks(this.kv, kvKeys.fileChunks(file.id, "data"));
  }

  async getFileSections(file: StoredFile): Promise<FileSection[]> {
    const bytes = await readChunks(this.kv, kvKeys.fileChunks(file.id, "sections"));
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
      if (await commitChecked(op)) break;
      // A concurrent delete of the same file wins; anything else (a parallel upload) retries.
      if ((await this.kv.get(metaKey)).value === null) return false;
    }
    await deleteChunks(this.kv, kvKeys.fileChunkPrefix(id));
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
      const op = this.kv.atomic().check(q).set(key, { files }, { expireIn: expireIn(file) });
      if (await commitChecked(op)) return true;
    }
  }

  async #releaseQuota(keyId: string, id: string): Promise<void> {
    const key = kvKeys.fileQuota(keyId);
    for (;;) {
      const q = await this.kv.get<QuotaRecord>(key);
      if (!q.value) return;
      const op = this.kv.atomic().check(q).set(key, { files: q.value.files.filter((f) => f.id !== id) });
      if (await commitChecked(op)) return;
    }
  }
}

/** Milliseconds until the file's expiry, for KV `expireIn` (at least 1). */
function expireIn(file: StoredFile): number {
  return Math.max(1, file.expiresAt - Date.now());
}
