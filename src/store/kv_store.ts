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
import type {
  CommitBatch,
  KeyMeta,
  KeyRecord,
  LeaseTake,
  LeaseView,
  SessionRecord,
  ThetaPoolDoc,
  UsageHour,
  UsageRow,
} from "./types.ts";
import {
  addMoney,
  compose,
  foldMoney,
  isLegacy,
  legacyMoney,
  metaOf,
  moneyKeys,
  sumLimbs,
  withNewFields,
} from "./kv_money.ts";
import { markChanged, writeNewKey } from "./kv_key_writes.ts";
import { KvPayments, writeEntry } from "./kv_payments.ts";
import { KvShop } from "./kv_shop.ts";
import type { PaymentQuery } from "./shop_store.ts";
import type {
  KeyOwner,
  LedgerEntry,
  Package,
  PackagePatch,
  Payment,
  PaymentMethod,
  PaymentMethodPatch,
  PaymentSettlement,
  RefundedPayment,
  SettledPayment,
} from "./shop_types.ts";
import { kvKeys } from "./kv_keys.ts";
import { bookAfterRenew, bookAfterTake, type LeaseBook, leaseViewOf } from "./kv_leases.ts";
import { checkDecision } from "./lease_decision.ts";
import { commitChecked, isLockedError, optimistic } from "./kv_atomic.ts";
import { KvTheta } from "./kv_theta.ts";
import { KvFiles } from "./kv_files.ts";
import { backfillUsageHours, readUsageHours } from "./kv_usage_hours.ts";
import { commitBatch, MAX_READ, readBooks } from "./kv_commit.ts";
import { Logger } from "../util/log.ts";

export class KvStore implements Store {
  readonly #theta: KvTheta;
  readonly #files: KvFiles;
  readonly #shop: KvShop;
  readonly #payments: KvPayments;

  /** `log`: where the pool watch's failures and a migration's mismatch go (the gateway's; a store opened by
   *  hand, in a test or a bench, logs warnings and errors to stdout). */
  constructor(
    private readonly kv: Deno.Kv,
    private readonly log: Logger = new Logger("warn"),
    private readonly onClose: () => void = () => {},
  ) {
    this.#theta = new KvTheta(kv, log);
    this.#files = new KvFiles(kv);
    this.#shop = new KvShop(kv);
    this.#payments = new KvPayments(kv);
  }

  /** `onClose` runs after the KV handle is closed (open.ts releases the DATA_DIR lock there). */
  static async open(path: string | undefined, log?: Logger, onClose?: () => void): Promise<KvStore> {
    const kv = await Deno.openKv(path);
    try {
      await backfillUsageHours(kv); // before any commit adds to the hourly counters
    } catch (err) {
      kv.close();
      throw err;
    }
    return new KvStore(kv, log, onClose);
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

  /** Metadata and counters in one read. */
  async getKey(id: string): Promise<KeyRecord | null> {
    const [meta, ...limbs] = await this.kv.getMany<[KeyMeta | KeyRecord, ...Deno.KvU64[]]>([
      kvKeys.key(id),
      ...moneyKeys(id),
    ]);
    if (meta.value === null) return null;
    if (isLegacy(meta.value)) return withNewFields(meta.value);
    return compose(meta.value, sumLimbs(id, limbs as Deno.KvEntryMaybe<Deno.KvU64>[]));
  }

  async getKeyByHash(hash: string): Promise<KeyRecord | null> {
    const id = (await this.kv.get<string>(kvKeys.keyByHash(hash))).value;
    return id === null ? null : this.getKey(id);
  }

  async keyChanges(since: number): Promise<KeyRecord[]> {
    const ids = new Set<string>();
    const prefix = kvKeys.keyChangePrefix();
    for await (const e of this.kv.list({ prefix, start: [...prefix, since] })) ids.add(e.key[2] as string);
    const recs = await Promise.all([...ids].map((id) => this.getKey(id)));
    return recs.filter((r) => r !== null);
  }

  async createKey(rec: KeyRecord, entry?: LedgerEntry): Promise<void> {
    const write = () => {
      const op = this.kv.atomic();
      writeNewKey(op, rec);
      if (entry) writeEntry(op, entry);
      return op.commit();
    };
    // A lock lost to another process's write on a shared KV file is retried; a check that finds the id or the
    // hash taken is the answer.
    const created = await optimistic("createKey", async () => {
      try {
        return { value: (await write()).ok };
      } catch (err) {
        if (isLockedError(err)) return null;
        throw err;
      }
    });
    if (!created) throw new Error("key already exists");
  }

  /** The stored hash and hint are kept (they change only by rotateKeyHash): written under a check of the
   *  record read, so a rotation in between makes it read again. */
  async updateKey(meta: KeyMeta): Promise<void> {
    await optimistic("updateKey", async () => {
      const e = await this.kv.get<KeyMeta | KeyRecord>(kvKeys.key(meta.id));
      const kept = e.value === null ? {} : { hash: e.value.hash, hint: e.value.hint };
      const op = this.kv.atomic().check(e).set(kvKeys.key(meta.id), { ...metaOf(meta), ...kept });
      markChanged(op, meta.id);
      return await commitChecked(op) ? { value: undefined } : null;
    });
  }

  commit(batch: CommitBatch): Promise<void> {
    return commitBatch(this.kv, batch);
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
        await this.#migrate(s.meta as Deno.KvEntry<KeyRecord>); // its money moves to the counters first
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

  /** Rewrites a record of the older format as metadata + counters; another process migrating it first wins. */
  async #migrate(e: Deno.KvEntry<KeyRecord>): Promise<KeyMeta> {
    const money = legacyMoney(e.value);
    if (money.credited !== e.value.credited) {
      this.log.warn("stored credited differs from balance + spent; balance kept", {
        key_id: e.value.id,
        credited: String(e.value.credited),
      });
    }
    const op = this.kv.atomic().check(e).set(e.key, metaOf(e.value));
    addMoney(op, e.value.id, "credited", money.credited);
    addMoney(op, e.value.id, "spent", money.spent);
    await commitChecked(op); // false: migrated meanwhile by another process, whose counters the caller reads
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

  usageHours(keyId: string, fromMs: number, toMs: number): Promise<UsageHour[]> {
    return readUsageHours(this.kv, keyId, fromMs, toMs);
  }

  async getTariff(): Promise<TariffRow[] | null> {
    return (await this.kv.get<TariffRow[]>(kvKeys.tariff())).value;
  }

  async putTariff(rows: TariffRow[]): Promise<void> {
    await this.kv.set(kvKeys.tariff(), rows);
  }

  putFile(
    file: StoredFile,
    data: Uint8Array,
    sectionsJson: Uint8Array,
    quota: FileQuota,
  ): Promise<PutFileResult> {
    return this.#files.put(file, data, sectionsJson, quota);
  }

  getFile(keyId: string, id: string, now: number): Promise<StoredFile | null> {
    return this.#files.get(keyId, id, now);
  }

  listFiles(keyId: string, now: number): Promise<StoredFile[]> {
    return this.#files.list(keyId, now);
  }

  getFileData(file: StoredFile): Promise<Uint8Array> {
    return this.#files.data(file);
  }

  getFileSections(file: StoredFile): Promise<FileSection[]> {
    return this.#files.sections(file);
  }

  deleteFile(keyId: string, id: string): Promise<boolean> {
    return this.#files.delete(keyId, id);
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

  updateThetaPool<T>(
    change: (doc: ThetaPoolDoc | null) => { doc: ThetaPoolDoc | null; result: T },
  ): Promise<T> {
    return this.#theta.updatePool(change);
  }

  watchThetaPool(onChange: () => void): () => void {
    return this.#theta.watchPool(onChange);
  }

  countRequest(
    keyId: string,
    counter: string,
    now: number,
    limits: { hour: number | null; day: number | null },
  ): Promise<"ok" | "hour" | "day"> {
    return this.#theta.countRequest(keyId, counter, now, limits);
  }

  /** KV removes the session by itself after its lifetime (`expireIn`, in time but not to the millisecond), so a
   *  read checks the expiry too. */
  async putSession(session: SessionRecord): Promise<void> {
    await this.kv.set(kvKeys.session(session.hash), session, {
      expireIn: Math.max(1, session.expiresAt - session.createdAt),
    });
  }

  async getSession(hash: string, now: number): Promise<SessionRecord | null> {
    const found = (await this.kv.get<SessionRecord>(kvKeys.session(hash))).value;
    return found !== null && found.expiresAt > now ? found : null;
  }

  async deleteSession(hash: string): Promise<void> {
    await this.kv.delete(kvKeys.session(hash));
  }

  listPackages(): Promise<Package[]> {
    return this.#shop.listPackages();
  }

  getPackage(id: string): Promise<Package | null> {
    return this.#shop.getPackage(id);
  }

  createPackage(p: Package): Promise<void> {
    return this.#shop.createPackage(p);
  }

  updatePackage(id: string, patch: PackagePatch): Promise<Package | null> {
    return this.#shop.updatePackage(id, patch);
  }

  listPaymentMethods(): Promise<PaymentMethod[]> {
    return this.#shop.listPaymentMethods();
  }

  getPaymentMethod(id: string): Promise<PaymentMethod | null> {
    return this.#shop.getPaymentMethod(id);
  }

  updatePaymentMethod(id: string, patch: PaymentMethodPatch): Promise<PaymentMethod | null> {
    return this.#shop.updatePaymentMethod(id, patch);
  }

  createPayment(p: Payment): Promise<void> {
    return this.#payments.create(p);
  }

  getPayment(id: string): Promise<Payment | null> {
    return this.#payments.get(id);
  }

  listPayments(q: PaymentQuery): Promise<Payment[]> {
    return this.#payments.list(q);
  }

  cancelPayment(id: string): Promise<Payment | null> {
    return this.#payments.cancel(id);
  }

  settlePayment(s: PaymentSettlement): Promise<SettledPayment> {
    return this.#payments.settle(s);
  }

  refundPayment(paymentId: string, entry: LedgerEntry, now: number): Promise<RefundedPayment> {
    return this.#payments.refund(paymentId, entry, now);
  }

  creditKey(entry: LedgerEntry): Promise<boolean> {
    return this.#payments.credit(entry);
  }

  listLedger(keyId: string): Promise<LedgerEntry[]> {
    return this.#payments.ledger(keyId);
  }

  getKeyOwner(keyId: string): Promise<KeyOwner | null> {
    return this.#shop.getKeyOwner(keyId);
  }

  listKeyOwners(chatId?: number): Promise<KeyOwner[]> {
    return this.#shop.listKeyOwners(chatId);
  }

  updateKeyOwner(keyId: string, change: (o: KeyOwner) => KeyOwner | null): Promise<KeyOwner | null> {
    return this.#shop.updateKeyOwner(keyId, change);
  }

  keyIdsByHint(hint: string): Promise<string[]> {
    return this.#shop.keyIdsByHint(hint);
  }

  rotateKeyHash(keyId: string, oldHash: string, next: { hash: string; hint: string }): Promise<boolean> {
    return this.#shop.rotateKeyHash(keyId, oldHash, next);
  }

  firstSeen(updateId: number, now: number, ttlMs: number): Promise<boolean> {
    return this.#shop.firstSeen(updateId, now, ttlMs);
  }

  close(): Promise<void> {
    this.#theta.close();
    this.kv.close();
    this.onClose();
    return Promise.resolve();
  }
}

/** A tool loop's lifetime from its last answer, for KV `expireIn` (at least 1). */
function lifetime(loop: ToolLoop): number {
  return Math.max(1, loop.expiresAt - loop.updatedAt);
}
