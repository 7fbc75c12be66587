/**
 * The store's format version, shared by both backends: the highest migration applied (Postgres:
 * `schema_migrations`, pg_migrations.ts; Deno KV: its format record, kv_format.ts). A build migrates an older
 * store on open and refuses one it cannot read (docs/upgrades.md).
 */

/** The store was written by a build that knows migrations this one does not: main.ts and the admin CLI print
 *  the message and exit 1. Thrown before anything is written. */
export class StoreFormatError extends Error {
  constructor(readonly store: string, readonly found: number, readonly known: number) {
    super(
      found > known
        ? `${store} is format ${found}, written by a newer gateway; this build reads formats up to ${known}. ` +
          "Run the newer gateway, or restore a backup into an empty store (docs/upgrades.md)."
        : `${store} records format ${found}, which this build does not know (written by another gateway); ` +
          `this build reads formats up to ${known}. Run the gateway that wrote it, or restore a backup into an ` +
          "empty store (docs/upgrades.md).",
    );
    this.name = "StoreFormatError";
  }
}

/**
 * Refuses (StoreFormatError) a store that records a version `known` does not hold: one past the newest, or one
 * this build's list skips. `applied`: the versions the store records (none: a store this build may migrate).
 */
export function checkFormat(store: string, applied: Iterable<number>, known: readonly number[]): void {
  const newest = Math.max(0, ...known);
  const unknown = [...applied].filter((v) => !known.includes(v));
  if (unknown.length > 0) throw new StoreFormatError(store, Math.max(...unknown), newest);
}
