/**
 * The ledger on Deno KV (store.ts LedgerStore): the group commit (kv_commit.ts), drain checkpoints and credit
 * leases (docs/ledger_leases.md; a key's lease book in one value, kv_leases.ts).
 */
import type { LedgerStore } from "./store.ts";
import type { CommitBatch, KeyMeta, KeyRecord, LeaseTake, LeaseView, UsageRow } from "./types.ts";
import { isLegacy, legacyMoney, moneyKeys, sumLimbs } from "./kv_money.ts";
import { kvKeys } from "./kv_keys.ts";
import { bookAfterRenew, bookAfterTake, type LeaseBook, leaseViewOf } from "./kv_leases.ts";
import { checkDecision } from "./lease_decision.ts";
import { commitChecked, optimistic } from "./kv_atomic.ts";
import { commitBatch, MAX_READ, readBooks } from "./kv_commit.ts";
import { migrateLegacyKey } from "./kv_key_migration.ts";
import type { Logger } from "../util/log.ts";

export class KvLedger implements LedgerStore {
  constructor(private readonly kv: Deno.Kv, private readonly log: Logger) {}

  commit(batch: CommitBatch): Promise<void> {
    return commitBatch(this.kv, batch);
  }

  async listOpen(): Promise<UsageRow[]> {
    const out: UsageRow[] = [];
    for await (const e of this.kv.list<UsageRow>({ prefix: kvKeys.openPrefix() })) out.push(e.value);
    return out;
  }

  /** The key's metadata, lease book and counters in one read, or null for an unknown key. */
  async #leaseState(keyId: string) {
    const [meta, book, ...limbs] = await this.kv.getMany<[KeyMeta | KeyRecord, LeaseBook, ...Deno.KvU64[]]>([
      kvKeys.key(keyId),
      kvKeys.keyLedger(keyId),
      ...moneyKeys(keyId),
    ]);
    if (meta.value === null) return null;
    const money = isLegacy(meta.value)
      ? legacyMoney(meta.value)
      : sumLimbs(keyId, limbs as Deno.KvEntryMaybe<Deno.KvU64>[]);
    return { meta: meta as Deno.KvEntry<KeyMeta | KeyRecord>, book, limbs, money };
  }

  /**
   * Optimistic: the write checks the lease book and every limb of the counters the view was built from, so
   * a concurrent take, renewal, settlement or top-up makes it read again and decide again.
   */
  takeLease(take: LeaseTake): Promise<{ view: LeaseView; grant: bigint }> {
    return optimistic("takeLease", async () => {
      const s = await this.#leaseState(take.keyId);
      if (s === null) throw new Error(`kv takeLease: unknown key ${take.keyId}`);
      if (isLegacy(s.meta.value)) {
        await migrateLegacyKey(this.kv, this.log, s.meta as Deno.KvEntry<KeyRecord>); // its money moves to the counters first
        return null;
      }
      const view = leaseViewOf(s.money, s.book.value, take.holder, take.now);
      const d = take.decide(view, s.meta.value.caps);
      checkDecision(view, d);
      if (d.grant === 0n && d.reserved === 0n) return { value: { view, grant: 0n } };
      const book = bookAfterTake(s.book.value, take.holder, take.now, take.ttlMs, view, d);
      // The metadata is checked too: a cap set meanwhile makes the take decide again with it.
      const op = this.kv.atomic().check(s.meta, s.book, ...s.limbs).set(kvKeys.keyLedger(take.keyId), book);
      return (await commitChecked(op)) ? { value: { view, grant: d.grant } } : null;
    });
  }

  async leaseView(keyId: string, holder: string, now: number): Promise<LeaseView | null> {
    const s = await this.#leaseState(keyId);
    return s && leaseViewOf(s.money, s.book.value, holder, now);
  }

  /** One atomic per `MAX_READ` keys (each renewal checks the book it rewrites), run side by side. */
  async renewLeases(
    holder: string,
    keyIds: readonly string[],
    now: number,
    ttlMs: number,
  ): Promise<string[]> {
    const ids = [...new Set(keyIds)];
    const chunks = [];
    for (let i = 0; i < ids.length; i += MAX_READ) chunks.push(ids.slice(i, i + MAX_READ));
    const renewed = await Promise.all(chunks.map((chunk) =>
      optimistic("renewLeases", async () => {
        const books = await readBooks(this.kv, chunk);
        const op = this.kv.atomic();
        const done: string[] = [];
        for (const [id, read] of books) {
          const book = bookAfterRenew(read.value, holder, now, ttlMs);
          if (!book) continue;
          op.check(read).set(kvKeys.keyLedger(id), book);
          done.push(id);
        }
        return done.length === 0 || (await commitChecked(op)) ? { value: done } : null;
      })
    ));
    return renewed.flat();
  }
}
