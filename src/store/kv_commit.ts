/**
 * The group commit on Deno KV (store.ts commit): a batch cut into atomic operations within KV's limits, each
 * applied once per batch id; and the read of the lease books it rewrites (kv_leases.ts), which a renewal
 * shares.
 */
import type { CommitBatch, MoneyDelta } from "./types.ts";
import { addMoney, moneyMutations } from "./kv_money.ts";
import { kvKeys } from "./kv_keys.ts";
import { bookAfterSettle, type LeaseBook } from "./kv_leases.ts";
import {
  commitChecked,
  keyBytes,
  MAX_KEY_BYTES,
  MAX_MUTATIONS,
  MAX_VALUE_BYTES,
  optimistic,
} from "./kv_atomic.ts";
import { usageParts } from "./kv_usage_hours.ts";
import { rowBytes } from "./kv_usage_row.ts";
import { BATCH_ID_TTL_MS, checkBatchId } from "./batch_id.ts";

/** Deno KV limits one atomic operation to 100 checks (lease books are rewritten under a check each). */
const MAX_CHECKS = 90;
/** Deno KV reads at most 10 keys in one `getMany`. */
export const MAX_READ = 10;

/** A part of a commit that goes whole into one atomic operation: `n` mutations whose keys (and its check's)
 *  are `keyBytes` long together (kv_atomic.ts keyBytes) and whose usage entries and open rows `valueBytes` at
 *  most (rowBytes); `book` names the key whose lease book it rewrites under a check (read just before, passed
 *  to `write` with the others). */
interface CommitPiece {
  n: number;
  keyBytes: number;
  valueBytes: number;
  book?: string;
  write(op: Deno.AtomicOperation, books: Map<string, Deno.KvEntryMaybe<LeaseBook>>): void;
}

/**
 * Money first and the settled checkpoints right after it, so a checkpoint is never deleted without its
 * balance change nor kept beside it (a batch splits only past 900 mutations, 80,000 bytes of keys, 500,000 of
 * values or 90 lease books). A usage row goes in the same atomic as the sums that count it in its hour
 * (kv_usage_hours.ts: one `sum` per counter of each hour a batch touches). A batch without lease deltas is
 * written blind: sums need no read. A key's lease deltas rewrite its lease book in the same atomic as its
 * sums, under a check; a lost check fails the whole atomic (its sums included), so only that atomic is
 * read again and retried.
 * Applied once per batch id (batch_id.ts): each atomic also sets its marker (kvKeys.commitDone: the batch's
 * id and the atomic's index) under a check that it is absent, so a retry of a batch that failed part-way
 * skips the atomics an earlier attempt committed. The cut is a function of the batch alone, so a retry's
 * atomic `i` holds the same writes as the first attempt's.
 */
export async function commitBatch(kv: Deno.Kv, batch: CommitBatch): Promise<void> {
  checkBatchId(batch.id);
  const pieces: CommitPiece[] = [];
  const add = (n: number, keyBytes: number, write: CommitPiece["write"], valueBytes = 0) =>
    pieces.push({ n, keyBytes, valueBytes, write });
  const leased = new Map<string, MoneyDelta[]>();
  for (const d of batch.money) {
    if (d.lease) leased.set(d.keyId, [...leased.get(d.keyId) ?? [], d]);
    else add(sumMutations(d), sumKeyBytes(d), (op) => addSums(op, d));
  }
  if (leased.size > 0 && batch.at === undefined) {
    throw new TypeError("kv commit: lease deltas need batch.at");
  }
  for (const [keyId, ds] of leased) {
    pieces.push({
      n: ds.reduce((n, d) => n + sumMutations(d), 2),
      keyBytes: ds.reduce((b, d) => b + sumKeyBytes(d), 2 * keyBytes(kvKeys.keyLedger(keyId))),
      valueBytes: 0,
      book: keyId,
      write(op, books) {
        const read = books.get(keyId)!;
        let book = read.value;
        for (const d of ds) {
          addSums(op, d);
          book = bookAfterSettle(book, batch.at!, d.spent, d.lease!);
        }
        op.check(read).set(kvKeys.keyLedger(keyId), book);
      },
    });
  }
  for (const id of batch.closed ?? []) {
    add(1, keyBytes(kvKeys.open(id)), (op) => op.delete(kvKeys.open(id)));
  }
  for (const part of usageParts(batch.usage, batch.id)) {
    add(part.n, part.keyBytes, (op) => part.write(op), part.valueBytes);
  }
  for (const u of batch.open ?? []) {
    add(1, keyBytes(kvKeys.open(u.requestId)), (op) => op.set(kvKeys.open(u.requestId), u), rowBytes(u));
  }
  // Every atomic starts with its marker: one mutation, and its key checked and set (its check is one
  // beyond the MAX_CHECKS lease books, within KV's 100).
  const marker = { n: 1, keyBytes: 2 * keyBytes(kvKeys.commitDone(batch.id, 0)) };
  const atomics: CommitPiece[][] = [];
  let atomic: CommitPiece[] = [];
  let n = marker.n;
  let bytes = marker.keyBytes;
  let values = 0;
  let checks = 0;
  for (const p of pieces) {
    const c = p.book === undefined ? 0 : 1;
    if (
      atomic.length > 0 &&
      (n + p.n > MAX_MUTATIONS || bytes + p.keyBytes > MAX_KEY_BYTES ||
        values + p.valueBytes > MAX_VALUE_BYTES ||
        checks + c > MAX_CHECKS)
    ) {
      atomics.push(atomic);
      [atomic, n, bytes, values, checks] = [[], marker.n, marker.keyBytes, 0, 0];
    }
    atomic.push(p);
    n += p.n;
    bytes += p.keyBytes;
    values += p.valueBytes;
    checks += c;
  }
  if (atomic.length > 0) atomics.push(atomic);
  for (const [i, pieces] of atomics.entries()) {
    await commitPieces(kv, kvKeys.commitDone(batch.id, i), pieces);
  }
}

/**
 * One atomic operation of a commit with its marker `done`; read, written and retried as a whole when it
 * rewrites lease books. Nothing is written when `done` is there already (an earlier attempt committed it).
 */
async function commitPieces(kv: Deno.Kv, done: Deno.KvKey, pieces: CommitPiece[]): Promise<void> {
  const keyIds = pieces.flatMap((p) => p.book === undefined ? [] : [p.book]);
  const build = (books: Map<string, Deno.KvEntryMaybe<LeaseBook>>) => {
    const op = kv.atomic().check({ key: done, versionstamp: null });
    for (const p of pieces) p.write(op, books);
    return op.set(done, true, { expireIn: BATCH_ID_TTL_MS });
  };
  // A lost check is the marker (committed before: done), a lease book that changed or a shared file locked
  // by another process meanwhile (read again, retry).
  await optimistic("commit", async () => {
    const books = keyIds.length === 0 ? new Map() : await readBooks(kv, keyIds);
    if (await commitChecked(build(books))) return { value: undefined };
    return (await kv.get(done)).versionstamp !== null ? { value: undefined } : null;
  });
}

/** The lease books of `keyIds`, read `MAX_READ` at a time. */
export async function readBooks(
  kv: Deno.Kv,
  keyIds: readonly string[],
): Promise<Map<string, Deno.KvEntryMaybe<LeaseBook>>> {
  const reads = [];
  for (let i = 0; i < keyIds.length; i += MAX_READ) {
    reads.push(kv.getMany<LeaseBook[]>(keyIds.slice(i, i + MAX_READ).map((id) => kvKeys.keyLedger(id))));
  }
  const books = new Map<string, Deno.KvEntryMaybe<LeaseBook>>();
  for (const e of (await Promise.all(reads)).flat()) books.set(e.key[1] as string, e);
  return books;
}

function sumMutations(d: MoneyDelta): number {
  return moneyMutations(d.spent) + moneyMutations(d.credited);
}

/** The keys' length of `addSums(d)`, at most (each as long as the longest counter's). */
function sumKeyBytes(d: MoneyDelta): number {
  return sumMutations(d) * keyBytes(kvKeys.money(d.keyId, "credited", 0));
}

function addSums(op: Deno.AtomicOperation, d: MoneyDelta): void {
  addMoney(op, d.keyId, "spent", d.spent);
  addMoney(op, d.keyId, "credited", d.credited);
}
