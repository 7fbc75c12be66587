/**
 * The key shop's payments and money steps on Postgres (shop_store.ts). Each money step is one transaction
 * that locks the payment's row first, then the key's (the group commit locks keys, then leases, and never a
 * payment, so no two of them wait on each other crosswise): a second settlement of the payment waits for the
 * first and finds it settled. Two payments settled with one charge id at once: the unique index on
 * telegram_charge_id refuses the second's write, which is then retried and finds the charge recorded.
 */
import { creditOf, firstOwner, isDuplicate, newKeyOf, settledPayment } from "./payment_decision.ts";
import type postgres from "postgres";
import type { Sql } from "./pg_connect.ts";
import { newKeyRow } from "./pg_rows.ts";
import { entryFromRow, entryRow, ownerRow, paymentFromRow, paymentRow } from "./pg_shop_rows.ts";
import type { PaymentQuery, PaymentStore } from "./shop_store.ts";
import {
  checkPaymentEntry,
  type LedgerEntry,
  type Payment,
  type PaymentSettlement,
  type RefundedPayment,
  type SettledPayment,
} from "./shop_types.ts";

/** Attempts of a transaction that lost to a deadlock, a serialization failure or a concurrent unique write. */
const ATTEMPTS = 5;
const RETRIED_CODES = new Set(["40P01", "40001", "23505"]);

async function retried<T>(sql: Sql, fn: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
  for (let attempt = 1;; attempt++) {
    try {
      return await sql.begin(fn) as T;
    } catch (err) {
      const code = (err as { code?: unknown } | null)?.code;
      if (attempt >= ATTEMPTS || typeof code !== "string" || !RETRIED_CODES.has(code)) throw err;
    }
  }
}

export class PgPayments implements PaymentStore {
  constructor(private readonly sql: Sql) {}

  async createPayment(p: Payment): Promise<void> {
    try {
      await this.sql`INSERT INTO payments ${this.sql(paymentRow(p))}`;
    } catch (err) {
      if ((err as { code?: string }).code === "23505") throw new Error("payment already exists");
      throw err;
    }
  }

  async getPayment(id: string): Promise<Payment | null> {
    const [row] = await this.sql`SELECT * FROM payments WHERE id = ${id}`;
    return row ? paymentFromRow(row) : null;
  }

  /** Served by payments_chat, payments_status or payments_time. */
  async listPayments(q: PaymentQuery): Promise<Payment[]> {
    const rows = await this.sql`
      SELECT * FROM payments WHERE true
        ${q.status === undefined ? this.sql`` : this.sql`AND status = ${q.status}`}
        ${q.chatId === undefined ? this.sql`` : this.sql`AND chat_id = ${q.chatId}`}
      ORDER BY created_at DESC, id DESC LIMIT ${q.limit}`;
    return rows.map(paymentFromRow);
  }

  async cancelPayment(id: string): Promise<Payment | null> {
    const [row] = await this.sql`
      WITH cancelled AS (
        UPDATE payments SET status = 'cancelled' WHERE id = ${id} AND status = 'pending' RETURNING *
      )
      SELECT * FROM cancelled UNION ALL SELECT * FROM payments WHERE id = ${id} AND NOT EXISTS (SELECT FROM cancelled)`;
    return row ? paymentFromRow(row) : null;
  }

  settlePayment(s: PaymentSettlement): Promise<SettledPayment> {
    return retried(this.sql, async (tx): Promise<SettledPayment> => {
      const [row] = await tx`SELECT * FROM payments WHERE id = ${s.paymentId} FOR UPDATE`;
      if (!row) throw new Error(`settlePayment: unknown payment ${s.paymentId}`);
      const p = paymentFromRow(row);
      const charge = s.telegramChargeId;
      const [seen] = charge === null
        ? []
        : await tx`SELECT * FROM payments WHERE telegram_charge_id = ${charge}`;
      if (isDuplicate(p, seen !== undefined)) {
        return { outcome: "duplicate", payment: seen ? paymentFromRow(seen) : p };
      }
      let credit = creditOf(p, s);
      let keyId = p.keyId;
      if (credit !== null) {
        if (keyId === null) {
          const rec = newKeyOf(p, credit);
          keyId = rec.id;
          await tx`INSERT INTO keys ${tx(newKeyRow(rec, tx.json))}`;
          await tx`INSERT INTO key_owners ${tx(ownerRow(firstOwner(p, keyId)))}`;
        } else {
          const [key] = await tx`SELECT revoked FROM keys WHERE id = ${keyId} FOR UPDATE`;
          if (!key || key.revoked) credit = null;
          else {
            await tx`UPDATE keys SET credited = credited + ${p.creditUsd.toString()}::numeric WHERE id = ${keyId}`;
            await tx`UPDATE key_owners SET last_credit_usd = ${p.creditUsd.toString()} WHERE key_id = ${keyId}`;
          }
        }
        if (credit !== null) await tx`INSERT INTO ledger_entries ${tx(entryRow({ ...credit.entry, keyId }))}`;
      }
      const next = settledPayment(p, credit !== null, keyId, charge);
      await tx`UPDATE payments SET status = ${next.status}, key_id = ${next.keyId},
        telegram_charge_id = ${next.telegramChargeId} WHERE id = ${p.id}`;
      return { outcome: next.status as "credited" | "refund_due", payment: next };
    });
  }

  /** The key's row is locked in a statement of its own before its leases are summed (as a lease take does,
   *  pg_ledger.ts): every take and commit of the key before this step is in the sum. */
  refundPayment(paymentId: string, entry: LedgerEntry, now: number): Promise<RefundedPayment> {
    return retried(this.sql, async (tx): Promise<RefundedPayment> => {
      const [row] = await tx`SELECT * FROM payments WHERE id = ${paymentId} FOR UPDATE`;
      if (!row) throw new Error(`refundPayment: unknown payment ${paymentId}`);
      const p = paymentFromRow(row);
      if (p.status === "credited" && p.keyId !== null) {
        const [key] = await tx`SELECT credited, spent FROM keys WHERE id = ${p.keyId} FOR UPDATE`;
        const [sums] = await tx`
          SELECT coalesce(sum(amount), 0) AS leased FROM leases WHERE key_id = ${p.keyId} AND expires_at > ${now}`;
        if (!key || BigInt(key.credited) - BigInt(key.spent) - BigInt(sums!.leased) < p.creditUsd) {
          return { outcome: "insufficient", payment: p };
        }
        checkPaymentEntry(p, entry);
        await tx`UPDATE keys SET credited = credited - ${p.creditUsd.toString()}::numeric WHERE id = ${p.keyId}`;
        await tx`INSERT INTO ledger_entries ${tx(entryRow({ ...entry, keyId: p.keyId, kind: "debit" }))}`;
      } else if (p.status !== "refund_due") {
        return { outcome: "not_refundable", payment: p };
      }
      await tx`UPDATE payments SET status = 'refunded' WHERE id = ${p.id}`;
      return { outcome: "refunded", payment: { ...p, status: "refunded" } };
    });
  }

  /** One statement: the entry is written only if the key's counter was. */
  async creditKey(entry: LedgerEntry): Promise<boolean> {
    if (entry.kind !== "credit") throw new RangeError(`creditKey: a ${entry.kind} entry`);
    const e = entryRow(entry);
    const rows = await this.sql`
      WITH k AS (
        UPDATE keys SET credited = credited + ${e.amount_usd}::numeric WHERE id = ${entry.keyId} RETURNING id
      )
      INSERT INTO ledger_entries (key_id, created_at, id, kind, amount_usd, reference)
      SELECT id, ${e.created_at}, ${e.id}, ${e.kind}, ${e.amount_usd}, ${e.reference} FROM k
      RETURNING key_id`;
    return rows.length > 0;
  }

  async listLedger(keyId: string): Promise<LedgerEntry[]> {
    return (await this.sql`SELECT * FROM ledger_entries WHERE key_id = ${keyId} ORDER BY created_at, id`).map(
      entryFromRow,
    );
  }
}
