/**
 * Checked writes on Deno KV that several processes share: a lost check is retried, never mistaken for an
 * answer. Used by the lease book (kv_leases.ts) and every read-check-write of the KV store.
 */

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
