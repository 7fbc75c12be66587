/**
 * The key shop's records (issue 20; spec §1.6, §5.5: keys issued by a chat bot). Money is pico-USD bigint
 * (src/money/usd.ts); a price is an integer in its currency's smallest unit (XTR: whole Telegram Stars).
 */

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

/** How a buyer pays. Seeded on a fresh store: `stars` (available) and `manual` (not available, no details). */
export interface PaymentMethod {
  id: string;
  title: string;
  kind: "stars" | "manual";
  /** The operator's switch: only available methods are listed and offered at checkout. */
  available: boolean;
  /** Manual: the payment details shown to the buyer; null otherwise or when not set. */
  details: string | null;
}

export type PaymentStatus = "pending" | "credited" | "refund_due" | "refunded" | "cancelled";

/** One checkout. Its package's credit and price are copied at checkout, so a later edit changes nothing. */
export interface Payment {
  id: string;
  chatId: number;
  packageId: string;
  methodId: string;
  /** The key it tops up; null until a first purchase issued the chat's key at settlement. */
  keyId: string | null;
  creditUsd: bigint;
  price: number;
  currency: string;
  status: PaymentStatus;
  /** Telegram's `telegram_payment_charge_id` (Stars); null for manual payments and until paid. */
  telegramChargeId: string | null;
  createdAt: number;
}

/** One movement of a key's credit, with what caused it. */
export interface LedgerEntry {
  id: string;
  keyId: string;
  kind: "credit" | "debit";
  amountUsd: bigint;
  /** "payment:<id>", "admin:topup", "initial", "refund:<payment id>". */
  reference: string;
  createdAt: number;
}

/** A key whose balance fell below its alert threshold (Shop.dueAlerts). */
export interface DueAlert {
  chatId: number;
  keyId: string;
  hint: string;
  balance: bigint;
  threshold: bigint;
}

export type SettleOutcome = "credited" | "duplicate" | "refund_due";

export interface SettleResult {
  outcome: SettleOutcome;
  payment: Payment;
  keyId: string | null;
  /** The new key's secret, on the settlement that issued it only (shown once, stored hashed). */
  newKey?: string;
}

export type Payability = { ok: true } | { ok: false; reason: string };
