/**
 * The key shop's records (spec §1.6, §5.5: keys issued by a chat bot), kept by the store beside the
 * keys (shop_store.ts). Money is pico-USD bigint (src/money/usd.ts); a price is an integer in its currency's
 * smallest unit (XTR: whole Telegram Stars).
 */
import type { KeyRecord } from "./types.ts";

/** What the bot sells: `creditUsd` of API credit for `price` of `currency`. */
export interface Package {
  id: string;
  name: string;
  creditUsd: bigint;
  price: number;
  currency: string;
  /** Switched off: not listed, not sold; payments already made for it are kept. */
  active: boolean;
}

export type PackagePatch = Partial<Omit<Package, "id">>;

/** How a buyer pays. A fresh store has the seed (SEED_PAYMENT_METHODS) and no other. */
export interface PaymentMethod {
  id: string;
  title: string;
  kind: "stars" | "manual";
  /** The operator's switch: only available methods are listed and offered at checkout. */
  available: boolean;
  /** Manual: the payment details shown to the buyer; null otherwise or while not set. */
  details: string | null;
}

export type PaymentMethodPatch = Partial<Pick<PaymentMethod, "title" | "available" | "details">>;

/** The payment methods of a fresh store: Telegram Stars on, a manual transfer off and without details. */
export const SEED_PAYMENT_METHODS: readonly PaymentMethod[] = [
  { id: "stars", title: "Telegram Stars", kind: "stars", available: true, details: null },
  { id: "manual", title: "Перевод по реквизитам", kind: "manual", available: false, details: null },
];

/**
 * pending → credited (paid and credited) | refund_due (paid, but not creditable: recorded for the operator) |
 * cancelled (the checkout was called off before any money came); credited | refund_due → refunded.
 */
export type PaymentStatus = "pending" | "credited" | "refund_due" | "refunded" | "cancelled";

/** One checkout. The package's credit and price are copied into it, so a later package edit changes nothing. */
export interface Payment {
  id: string;
  chatId: number;
  packageId: string;
  methodId: string;
  /** The key it tops up; null until a first purchase issues the chat's key at settlement. */
  keyId: string | null;
  creditUsd: bigint;
  price: number;
  currency: string;
  status: PaymentStatus;
  /** Telegram's `telegram_payment_charge_id` (Stars); null for manual payments and until paid. */
  telegramChargeId: string | null;
  createdAt: number;
}

/** One movement of a key's credit, written in the same atomic step as the money it records. */
export interface LedgerEntry {
  id: string;
  keyId: string;
  kind: "credit" | "debit";
  amountUsd: bigint;
  /** "payment:<id>", "admin:topup", "initial", "refund:<payment id>". */
  reference: string;
  createdAt: number;
}

/** A key sold by the shop: the chat that owns it and its low-balance alert. */
export interface KeyOwner {
  keyId: string;
  chatId: number;
  /** Alert below this balance; null: 10% of `lastCreditUsd`. */
  alertThreshold: bigint | null;
  /** The credit of the key's last purchase. */
  lastCreditUsd: bigint;
  /** An alert was sent for the current crossing (cleared once the balance is back above the threshold). */
  alerted: boolean;
}

/**
 * What a settlement does to a payment still pending (store step `settlePayment`): `credit` credits
 * `entry.amountUsd` to the payment's key — `newKey` when the payment has none yet (a first purchase: the key is
 * created in the same step, with the credit as its only money, owned by the payment's chat); null records the
 * payment as refund_due. The step itself turns a credit into refund_due when the key is revoked or gone, or
 * the payment was cancelled (the money came anyway).
 */
export interface PaymentSettlement {
  paymentId: string;
  telegramChargeId: string | null;
  credit: { entry: LedgerEntry; newKey?: KeyRecord } | null;
}

export interface SettledPayment {
  /** duplicate: the payment was settled before (or the charge id belongs to a settled payment); nothing
   *  written. */
  outcome: "credited" | "refund_due" | "duplicate";
  payment: Payment;
}

export interface RefundedPayment {
  /** insufficient: the key's free credit (credited − spent − live leases) cannot cover the debit;
   *  not_refundable: the payment is not credited or refund_due; nothing written then. */
  outcome: "refunded" | "insufficient" | "not_refundable";
  payment: Payment;
}

/** A ledger entry of a payment (its credit or its refund) moves exactly the payment's credit. */
export function checkPaymentEntry(p: Payment, entry: LedgerEntry): void {
  if (entry.amountUsd !== p.creditUsd) {
    throw new RangeError(`payment ${p.id}: entry of ${entry.amountUsd} for a credit of ${p.creditUsd}`);
  }
}
