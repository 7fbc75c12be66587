/**
 * Checked writes on Deno KV that several processes share: a lost check is retried, never mistaken for an
 * answer. Used by the lease book (kv_leases.ts) and every read-check-write of the KV store.
 */

/** Deno KV limits one atomic operation to 1000 mutations; a store's writes split before this many. */
export const MAX_MUTATIONS = 900;
/** Deno KV limits the keys of one atomic operation (its checks' and its mutations') to 81,920 bytes together,
 *  as encoded (`keyBytes`); a store's writes split before this many. */
export const MAX_KEY_BYTES = 80_000;
/** Deno KV limits the keys and values of one atomic operation to 819,200 bytes together; a commit's usage
 *  entries and open rows (kv_commit.ts) split before this many of values, leaving room for its keys, its
 *  lease books (at most 90, a few holders each) and its sums. */
export const MAX_VALUE_BYTES = 500_000;

/**
 * The size of a key of the store as Deno KV encodes it (denokv's tuple encoding: a string is a type byte, its
 * UTF-8 with each 0x00 escaped by a following 0xff, and a terminator; a number a type byte and 8 bytes), the
 * measure of MAX_KEY_BYTES. The store's keys hold only strings and numbers (kv_keys.ts).
 */
export function keyBytes(key: Deno.KvKey): number {
  let n = 0;
  for (const part of key) n += typeof part === "string" ? 2 + escapedUtf8Length(part) : 9;
  return n;
}

/**
 * The length of `s` in UTF-8 as the key encoding writes it (each 0x00 one byte more), counted from its UTF-16
 * code units without encoding it: a group commit sizes every row's key. A lone surrogate counts as
 * the 3 bytes of the U+FFFD it is encoded as.
 */
function escapedUtf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) {
      if (c === 0) n++;
    } else if (c < 0x800) n++;
    else if (c < 0xdc00 && c >= 0xd800 && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2; // a surrogate pair: 4 bytes for its 2 units
      i++;
    } else n += 2;
  }
  return n;
}

/** Whether a commit failed because another connection to a shared KV file (SQLite) wrote meanwhile. */
export function isLockedError(err: unknown): boolean {
  return err instanceof Error && err.message === "database is locked";
}

/**
 * Commits a write guarded by checks: false when a check failed. A KV file shared by processes (SQLite) also
 * refuses such a write with "database is locked" when another connection wrote between the write's check
 * reads and its writes; the transaction is rolled back whole, so it is a lost check like any other.
 */
export async function commitChecked(op: Deno.AtomicOperation): Promise<boolean> {
  try {
    return (await op.commit()).ok;
  } catch (err) {
    if (isLockedError(err)) return false;
    throw err;
  }
}

const MAX_ATTEMPTS = 100;

/**
 * Runs an optimistic step until it commits: `step` returns `{ value }` once done or null on a lost `check`
 * (it then re-reads). A small random backoff between attempts spreads contending writers; bounded.
 */
export async function optimistic<T>(what: string, step: () => Promise<{ value: T } | null>): Promise<T> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const done = await step();
    if (done) return done.value;
    await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, 2 ** attempt)));
  }
  throw new Error(`kv ${what}: still conflicting after ${MAX_ATTEMPTS} attempts`);
}
