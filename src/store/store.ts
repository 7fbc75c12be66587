/**
 * The persistence boundary. Kept about the domain (keys, usage rows) so a Postgres implementation
 * can stand beside the Deno KV one. The process that serves requests is the only writer of an
 * embedded store, so hot-path state (balances, holds) is owned in memory by src/accounts and made
 * durable through `commit`.
 */
import type { TariffRow } from "../billing/tariff_seed.ts";
import type { CommitBatch, KeyRecord, UsageRow } from "./types.ts";

export interface UsagePage {
  rows: UsageRow[];
  /** Opaque continuation just past each row (same length as `rows`), so a reader that stops
   *  mid-page can resume exactly there; a position, not an offset, so newer rows never shift it. */
  cursors: string[];
  /** Opaque continuation, absent on the last page. */
  next?: string;
}

export interface Store {
  /** Every key record (loaded once at start-up into the in-memory account table). */
  listKeys(): Promise<KeyRecord[]>;
  getKey(id: string): Promise<KeyRecord | null>;
  /** Creates a key; fails if the id or the hash already exists. */
  createKey(rec: KeyRecord): Promise<void>;
  /** Writes key records and usage rows in one atomic operation (last writer wins per key). */
  commit(batch: CommitBatch): Promise<void>;
  /** Usage rows of one key, newest first. `after` is a continuation from a previous page. */
  listUsage(keyId: string, opts: { limit: number; after?: string }): Promise<UsagePage>;
  /** The live tariff rows; null when never stored (the gateway then seeds it). */
  getTariff(): Promise<TariffRow[] | null>;
  /** Replaces the whole tariff in one write. */
  putTariff(rows: TariffRow[]): Promise<void>;
  close(): void;
}
