/**
 * A key's usage rows on Deno KV, several to an entry (store format 2), packed into bytes (format 4,
 * kv_usage_pack.ts). A commit writes the rows of one (key, hour, family, model) as entries of up to ENTRY_BYTES, each keyed by its first row in the listing order
 * (kvKeys.usage: newest first, then by request id) and its batch (kvKeys.usageEntry), and holding its rows in
 * that order. A row two batches wrote is listed twice, as its hour counts it twice (once when a page ends
 * between the two: a cursor names a place, and both have it); neither entry replaces the other's rows. One entry per row cost
 * a KV mutation and a SQLite row per request, the largest single item of a request's own work
 * (docs/performance.md "JSON path: the gateway's own work"). A format-1 entry holds one row as its value, a
 * format-2 entry its rows as objects, a format-3 entry its rows as arrays (kv_usage_row.ts); all four are read
 * alike.
 *
 * The entries of processes sharing a KV file overlap in time, so a page is a merge (UsageMerge): a row is
 * listed once no entry still unread can hold a row before it.
 */
import type { UsagePage } from "./store.ts";
import type { UsageRow } from "./types.ts";
import { kvKeys } from "./kv_keys.ts";
import { keyBytes } from "./kv_atomic.ts";
import { type RowTuple, tupleRow } from "./kv_usage_row.ts";
import { RowPacker, unpackRows } from "./kv_usage_pack.ts";

/** An entry's value: its rows in listing order packed (format 4), as arrays (format 3) or objects (format 2), or
 *  one row (format 1). */
export type UsageEntry = Uint8Array | UsageRow | readonly UsageRow[] | readonly RowTuple[];

export function entryRows(value: UsageEntry): readonly UsageRow[] {
  if (value instanceof Uint8Array) return unpackRows(value);
  if (!Array.isArray(value)) return [value as UsageRow];
  return Array.isArray(value[0])
    ? (value as readonly RowTuple[]).map(tupleRow)
    : value as readonly UsageRow[];
}

/** A row's place in the listing: its time and request id. */
interface Place {
  createdAt: number;
  requestId: string;
}

/**
 * Negative when `a` is listed before `b`: newer first, then by request id. Request ids are ASCII (the
 * gateway's `req_` ids), so comparing code units orders them as KV orders their bytes.
 */
export function rowOrder(a: Place, b: Place): number {
  return b.createdAt - a.createdAt || (a.requestId < b.requestId ? -1 : a.requestId > b.requestId ? 1 : 0);
}

/** Deno KV refuses a value over 65,536 bytes as encoded; an entry's rows by tupleBytes stay within this. */
export const ENTRY_BYTES = 60_000;

/** An entry to write: its key, its rows in listing order and as they are stored (packed, kv_usage_pack.ts), the
 *  key's encoded size and the value's. */
export interface NewEntry {
  key: Deno.KvKey;
  rows: UsageRow[];
  value: Uint8Array;
  keyBytes: number;
  bytes: number;
}

/** Rows of one key as entries of batch `batchId`: sorted into listing order and cut where the next row would
 *  pass ENTRY_BYTES. */
export function usageEntries(rows: readonly UsageRow[], batchId: string): NewEntry[] {
  const sorted = rows.toSorted(rowOrder);
  const out: NewEntry[] = [];
  const packer = new RowPacker();
  let cur: NewEntry | undefined;
  const close = (e: NewEntry) => {
    e.value = packer.finish();
    e.bytes = e.value.length;
    out.push(e);
  };
  for (const u of sorted) {
    if (cur !== undefined && packer.add(u) > ENTRY_BYTES) {
      packer.undo();
      close(cur);
      cur = undefined;
    }
    if (cur === undefined) {
      const key = kvKeys.usageEntry(u.keyId, u.createdAt, u.requestId, batchId);
      cur = { key, rows: [], value: EMPTY, keyBytes: keyBytes(key), bytes: 0 };
      packer.add(u);
    }
    cur.rows.push(u);
  }
  if (cur !== undefined) close(cur);
  return out;
}

const EMPTY = new Uint8Array(0);

/** A page's position: just past the row at `past`; the next page reads entries from the one keyed by `from`,
 *  the first that may still hold a row past it. */
interface Position {
  past: Place;
  from: Place;
}

/** Opaque to callers (the report signs it): `past time:from time:length of from's id:from's id` then past's id. */
function cursorOf(past: Place, from: Place): string {
  return `${past.createdAt}:${from.createdAt}:${from.requestId.length}:${from.requestId}${past.requestId}`;
}

function parseCursor(cursor: string): Position {
  const m = /^(\d{1,16}):(\d{1,16}):(\d{1,4}):(.*)$/s.exec(cursor);
  const idLength = m ? Number(m[3]) : -1;
  if (!m || idLength > m[4]!.length) throw new Error("invalid usage cursor");
  return {
    past: { createdAt: Number(m[1]), requestId: m[4]!.slice(idLength) },
    from: { createdAt: Number(m[2]), requestId: m[4]!.slice(0, idLength) },
  };
}

/** A read entry: its first row's place and how many of its rows wait in the buffer. */
interface Read extends Place {
  left: number;
}

/**
 * One page of a key's rows from its entries, given in key order (`add`). Rows past the cursor wait in a buffer
 * until an entry whose first row comes after them is read (or the entries end): every entry not read yet
 * starts there or later, so none can hold a row before them. Each listed row's cursor names the first entry
 * that still has a row waiting after it, so the next page reads again no entry it has wholly listed but the
 * last one read.
 */
export class UsageMerge {
  /** The entry this page starts reading at (kvKeys.usage of its place); undefined on the first page. */
  readonly from: Place | undefined;
  readonly #past: Place | undefined;
  readonly #limit: number;
  /** Waiting rows, last listed first (so the next to list is popped), each with its entry's index. */
  #waiting: { row: UsageRow; entry: number }[] = [];
  #entries: Read[] = [];
  /** The first entry with rows still waiting, or the last one read. */
  #from = 0;
  readonly #rows: UsageRow[] = [];
  readonly #cursors: string[] = [];

  /** Refuses (Error "invalid usage cursor") an `after` that is not one of its cursors. */
  constructor(limit: number, after?: string) {
    this.#limit = limit;
    const at = after === undefined ? undefined : parseCursor(after);
    this.from = at?.from;
    this.#past = at?.past;
  }

  /** Takes the next entry, keyed by `first`; true once the page is full (read no more). */
  add(first: Place, rows: readonly UsageRow[]): boolean {
    // Read before the rows it bounds are listed, so a cursor past them names it rather than an entry behind.
    const entry = this.#entries.push({ createdAt: first.createdAt, requestId: first.requestId, left: 0 }) - 1;
    if (this.#list(first)) return true;
    const past = this.#past;
    for (const row of rows) {
      if (past && rowOrder(row, past) <= 0) continue;
      this.#waiting.push({ row, entry });
      this.#entries[entry]!.left++;
    }
    this.#waiting.sort((a, b) => rowOrder(b.row, a.row));
    return false;
  }

  /** The page: the rows still waiting listed too, when the page is not full. */
  page(): UsagePage {
    this.#list(undefined);
    const rows = this.#rows;
    return rows.length === this.#limit && rows.length > 0
      ? { rows, cursors: this.#cursors, next: this.#cursors.at(-1)! }
      : { rows, cursors: this.#cursors };
  }

  /** Lists the waiting rows that come before `bound` (all, without one); true once the page is full. */
  #list(bound: Place | undefined): boolean {
    const waiting = this.#waiting;
    const entries = this.#entries;
    while (this.#rows.length < this.#limit && waiting.length > 0) {
      const next = waiting.at(-1)!;
      if (bound && rowOrder(next.row, bound) >= 0) break;
      waiting.pop();
      entries[next.entry]!.left--;
      while (this.#from < entries.length - 1 && entries[this.#from]!.left === 0) this.#from++;
      const from = entries[this.#from]!;
      this.#rows.push(next.row);
      this.#cursors.push(cursorOf(next.row, from));
    }
    return this.#rows.length >= this.#limit;
  }
}
