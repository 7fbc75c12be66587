/**
 * Bytes larger than one Deno KV value kept as numbered chunks under a key prefix: uploaded files (kv_files.ts)
 * and kept answers (kv_idempotency.ts). The chunks carry KV's expiry of what they belong to; they are never
 * visible on their own — the record that names their prefix is written after them.
 */
import { concatBytes } from "../util/bytes.ts";

/** A KV value holds at most 64 KiB: bytes are cut into chunks of this size. */
export const CHUNK_BYTES = 60_000;
/** Chunks per atomic write (Deno KV caps the total size of one atomic operation at 800 KiB). */
export const CHUNKS_PER_COMMIT = 10;
/** Deletes per atomic (below kv_atomic.ts MAX_MUTATIONS). */
const DELETES_PER_COMMIT = 500;

/** Writes `bytes` as the chunks `[...prefix, n]`, removed by KV at `expiresAt` (Unix ms); none for no bytes. */
export async function writeChunks(
  kv: Deno.Kv,
  prefix: Deno.KvKey,
  bytes: Uint8Array,
  expiresAt: number,
): Promise<void> {
  const count = Math.ceil(bytes.byteLength / CHUNK_BYTES);
  for (let i = 0; i < count; i += CHUNKS_PER_COMMIT) {
    const op = kv.atomic();
    const expireIn = Math.max(1, expiresAt - Date.now());
    for (let n = i; n < Math.min(count, i + CHUNKS_PER_COMMIT); n++) {
      op.set([...prefix, n], bytes.slice(n * CHUNK_BYTES, (n + 1) * CHUNK_BYTES), { expireIn });
    }
    if (!(await op.commit()).ok) throw new Error("kv chunk write failed");
  }
}

/** The chunks under `prefix` joined in order (empty when there are none). */
export async function readChunks(kv: Deno.Kv, prefix: Deno.KvKey): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const e of kv.list<Uint8Array>({ prefix })) chunks.push(e.value);
  return chunks.length === 0 ? new Uint8Array(0) : concatBytes(chunks);
}

/** Deletes every entry under `prefix`, a few hundred per atomic. */
export async function deleteChunks(kv: Deno.Kv, prefix: Deno.KvKey): Promise<void> {
  let op = kv.atomic();
  let n = 0;
  for await (const e of kv.list({ prefix })) {
    op.delete(e.key);
    if (++n % DELETES_PER_COMMIT === 0) {
      await op.commit();
      op = kv.atomic();
    }
  }
  await op.commit();
}
