/**
 * The key shop's payments and money steps on Deno KV (shop_store.ts). A payment is one value with three index
 * entries (every payment, by status, by chat: kv_keys.ts) moved in the same atomic as its status. The money
 * steps are single atomics guarded by checks of everything they read, retried on a lost check
 * (kv_atomic.ts): a settlement checks the payment's versionstamp and the charge id's absence, so of two
 * settlements of one payment or one charge id exactly one commits and the other re-reads a duplicate; a
 * credit is KV's `sum` on the key's counter (kv_money.ts), so it never conflicts with the group commit's sums.
 */
import { creditOf, firstOwner, isDuplicate, newKeyOf, settledPayment } from "./payment_decision.ts";
import { commitChecked, optimistic } from "./kv_atomic.ts";
import { kvKeys } from "./kv_keys.ts";
import { type LeaseBook, leaseViewOf } from "./kv_leases.ts";
import { addMoney, moneyKeys, setMoney, sumLimbs } from "./kv_money.ts";
import { writeNewKey } from "./kv_key_writes.ts";
import { tryCommit } from "./kv_shop.ts";
import type { PaymentQuery, PaymentStore } from "./shop_store.ts";
import {
  checkPaymentEntry,
  type KeyOwner,
  type LedgerEntry,
  type Payment,
  type PaymentSettlement,
  type RefundedPayment,
  type SettledPayment,
} from "./shop_types.ts";
import type { KeyMeta } from "./types.ts";

/** Deno KV reads at most 10 keys in one `getMany`. */
const MAX_READ = 10;

export class KvPayments implements PaymentStore {
  constructor(private readonly kv: Deno.Kv) {}

  async createPayment(p: Payment): Promise<void> {
    const created = await optimistic("createPayment", () => {
      const op = this.kv.atomic().check({ key: kvKeys.payment(p.id), versionstamp: null });
      writePayment(op, p);
      return tryCommit(op);
    });
    if (!created) throw new Error("payment already exists");
  }

  async getPayment(id: string): Promise<Payment | null> {
    return (await this.kv.get<Payment>(kvKeys.payment(id))).value;
  }

  /** Walks the narrowest index newest first; with both a chat and a status, the chat's (a chat has few). */
  async listPayments(q: PaymentQuery): Promise<Payment[]> {
    const prefix = q.chatId !== undefined
      ? kvKeys.paymentByChatPrefix(q.chatId)
      : q.status !== undefined
      ? kvKeys.paymentByStatusPrefix(q.status)
      : kvKeys.paymentByTimePrefix();
    const out: Payment[] = [];
    let ids: string[] = [];
    const fetch = async () => {
      const read = await this.kv.getMany<Payment[]>(ids.map((id) => kvKeys.payment(id)));
      for (const e of read) {
        if (e.value !== null && (q.status === undefined || e.value.status === q.status)) out.push(e.value);
      }
      ids = [];
    };
    for await (const e of this.kv.list({ prefix }, { reverse: true })) {
      ids.push(e.key[e.key.length - 1] as string);
      if (ids.length === MAX_READ) await fetch();
      if (out.length >= q.limit) break;
    }
    if (ids.length > 0 && out.length < q.limit) await fetch();
    return out.slice(0, q.limit);
  }

  cancelPayment(id: string): Promise<Payment | null> {
    return optimistic("cancelPayment", async () => {
      const e = await this.kv.get<Payment>(kvKeys.payment(id));
      if (e.value === null || e.value.status !== "pending") return { value: e.value };
      const next: Payment = { ...e.value, status: "cancelled" };
      const op = this.kv.atomic().check(e);
      movePayment(op, e.value, next);
      return await commitChecked(op) ? { value: next } : null;
    });
  }

  settlePayment(s: PaymentSettlement): Promise<SettledPayment> {
    return optimistic<SettledPayment>("settlePayment", async () => {
      const charge = s.telegramChargeId;
      const [pay, seen] = await this.kv.getMany<[Payment, string]>([
        kvKeys.payment(s.paymentId),
        kvKeys.paymentCharge(charge ?? ""),
      ]);
      const p = pay.value;
      if (p === null) throw new Error(`settlePayment: unknown payment ${s.paymentId}`);
      const chargeSeen = charge !== null && seen.value !== null;
      if (isDuplicate(p, chargeSeen)) {
        const settled = !chargeSeen || seen.value === p.id ? p : await this.getPayment(seen.value!);
        return { value: { outcome: "duplicate", payment: settled ?? p } };
      }
      const op = this.kv.atomic().check(pay);
      if (charge !== null) op.check(seen).set(seen.key, p.id);
      let credit = creditOf(p, s);
      let keyId = p.keyId;
      if (credit !== null) {
        if (keyId === null) {
          const rec = newKeyOf(p, credit);
          keyId = rec.id;
          writeNewKey(op, rec);
          op.check({ key: kvKeys.keyOwner(keyId), versionstamp: null })
            .set(kvKeys.keyOwner(keyId), firstOwner(p, keyId))
            .set(kvKeys.chatKey(p.chatId, keyId), null);
        } else {
          const [meta, owner] = await this.kv.getMany<[KeyMeta, KeyOwner]>([
            kvKeys.key(keyId),
            kvKeys.keyOwner(keyId),
          ]);
          op.check(meta, owner);
          if (meta.value === null || meta.value.revoked) credit = null;
          else {
            addMoney(op, keyId, "credited", p.creditUsd);
            if (owner.value !== null) op.set(owner.key, { ...owner.value, lastCreditUsd: p.creditUsd });
          }
        }
        if (credit !== null) writeEntry(op, { ...credit.entry, keyId });
      }
      const next = settledPayment(p, credit !== null, keyId, charge);
      movePayment(op, p, next);
      if (!await commitChecked(op)) return null;
      return { value: { outcome: next.status as "credited" | "refund_due", payment: next } };
    });
  }

  /** The debit sets the key's `credited` limbs under a check of every limb and of its lease book. */
  refundPayment(paymentId: string, entry: LedgerEntry, now: number): Promise<RefundedPayment> {
    return optimistic<RefundedPayment>("refundPayment", async () => {
      const pay = await this.kv.get<Payment>(kvKeys.payment(paymentId));
      const p = pay.value;
      if (p === null) throw new Error(`refundPayment: unknown payment ${paymentId}`);
      const next: Payment = { ...p, status: "refunded" };
      const op = this.kv.atomic().check(pay);
      if (p.status === "credited" && p.keyId !== null) {
        // The payment again, in the same snapshot as the money: a refund that committed between the two reads
        // would otherwise make this one read as "insufficient" instead of "not_refundable".
        const [again, book, ...limbs] = await this.kv.getMany<[Payment, LeaseBook, ...Deno.KvU64[]]>([
          kvKeys.payment(paymentId),
          kvKeys.keyLedger(p.keyId),
          ...moneyKeys(p.keyId),
        ]);
        if (again.versionstamp !== pay.versionstamp) return null; // changed meanwhile: read again
        const money = sumLimbs(p.keyId, limbs as Deno.KvEntryMaybe<Deno.KvU64>[]);
        const view = leaseViewOf(money, book.value as LeaseBook | null, "", now);
        if (view.credited - view.spent - view.leased < p.creditUsd) {
          return { value: { outcome: "insufficient", payment: p } };
        }
        checkPaymentEntry(p, entry);
        op.check(book, ...limbs);
        setMoney(op, p.keyId, "credited", money.credited - p.creditUsd);
        writeEntry(op, { ...entry, keyId: p.keyId, kind: "debit" });
      } else if (p.status !== "refund_due") {
        return { value: { outcome: "not_refundable", payment: p } };
      }
      movePayment(op, p, next);
      return await commitChecked(op) ? { value: { outcome: "refunded", payment: next } } : null;
    });
  }

  /** Keys are never deleted, so the key read before the blind write still exists at the write. */
  async creditKey(entry: LedgerEntry): Promise<boolean> {
    if (entry.kind !== "credit") throw new RangeError(`creditKey: a ${entry.kind} entry`);
    if ((await this.kv.get(kvKeys.key(entry.keyId))).value === null) return false;
    const op = this.kv.atomic();
    addMoney(op, entry.keyId, "credited", entry.amountUsd);
    writeEntry(op, entry);
    if (!(await op.commit()).ok) throw new Error("kv credit failed");
    return true;
  }

  async listLedger(keyId: string): Promise<LedgerEntry[]> {
    const out: LedgerEntry[] = [];
    for await (const e of this.kv.list<LedgerEntry>({ prefix: kvKeys.ledgerEntryPrefix(keyId) })) {
      out.push(e.value);
    }
    return out;
  }
}

export function writeEntry(op: Deno.AtomicOperation, entry: LedgerEntry): void {
  op.set(kvKeys.ledgerEntry(entry.keyId, entry.createdAt, entry.id), entry);
}

export function writePayment(op: Deno.AtomicOperation, p: Payment): void {
  op.set(kvKeys.payment(p.id), p)
    .set(kvKeys.paymentByTime(p.createdAt, p.id), null)
    .set(kvKeys.paymentByStatus(p.status, p.createdAt, p.id), null)
    .set(kvKeys.paymentByChat(p.chatId, p.createdAt, p.id), null);
}

/** The payment rewritten, its status index moved (its time and chat never change). */
function movePayment(op: Deno.AtomicOperation, from: Payment, to: Payment): void {
  op.set(kvKeys.payment(to.id), to);
  if (from.status !== to.status) {
    op.delete(kvKeys.paymentByStatus(from.status, from.createdAt, from.id))
      .set(kvKeys.paymentByStatus(to.status, to.createdAt, to.id), null);
  }
}
