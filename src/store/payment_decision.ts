/**
 * What every store decides the same way when it settles a payment (store.ts settlePayment; kv_payments.ts,
 * pg_payments.ts): pure rules, the stores only read what they need and write the outcome in one atomic step.
 */
import { checkPaymentEntry, type KeyOwner, type Payment, type PaymentSettlement } from "./shop_types.ts";
import type { KeyRecord } from "./types.ts";

/** A payment settled before, or a charge id that already paid one: a duplicate, nothing written. */
export function isDuplicate(p: Payment, chargeAlreadySeen: boolean): boolean {
  return chargeAlreadySeen || (p.status !== "pending" && p.status !== "cancelled");
}

/** The credit the settlement asks for, checked against the payment; null for a cancelled checkout (its money
 *  is kept as refund_due). */
export function creditOf(p: Payment, s: PaymentSettlement): PaymentSettlement["credit"] {
  const credit = p.status === "pending" ? s.credit : null;
  if (credit !== null) checkPaymentEntry(p, credit.entry);
  return credit;
}

/** The key a first purchase issues: refused when the shop gave none. */
export function newKeyOf(p: Payment, credit: NonNullable<PaymentSettlement["credit"]>): KeyRecord {
  if (!credit.newKey) throw new Error(`settlePayment: payment ${p.id} has no key and no new key was given`);
  return credit.newKey;
}

/** The owner record of a key a first purchase issued to the payment's chat. */
export function firstOwner(p: Payment, keyId: string): KeyOwner {
  return { keyId, chatId: p.chatId, alertThreshold: null, lastCreditUsd: p.creditUsd, alerted: false };
}

/** The payment after its settlement: credited to `keyId`, or refund_due when nothing could be credited. */
export function settledPayment(
  p: Payment,
  credited: boolean,
  keyId: string | null,
  charge: string | null,
): Payment {
  return {
    ...p,
    status: credited ? "credited" : "refund_due",
    keyId: credited ? keyId : p.keyId,
    telegramChargeId: charge ?? p.telegramChargeId,
  };
}
