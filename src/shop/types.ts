/**
 * The key shop's records (spec §1.6, §5.5: keys issued by a chat bot): the stored ones are the
 * store's (src/store/shop_types.ts), re-exported here; these are the shop's answers.
 */
import type { Payment } from "../store/shop_types.ts";

export type {
  KeyOwner,
  LedgerEntry,
  Package,
  PackagePatch,
  Payment,
  PaymentMethod,
  PaymentMethodPatch,
  PaymentStatus,
} from "../store/shop_types.ts";

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

/**
 * What the bot does for the shop when an operator acts outside the chat (the admin API, the CLI through the
 * gateway): set on the Shop by the bot when it runs in this process (Shop.courier).
 */
export interface ShopCourier {
  /** Tells the buyer's chat what a settlement did (the new key's secret on the settlement that issued it). */
  announceSettlement(r: SettleResult): Promise<void>;
  /** Returns a Stars payment to its buyer (Telegram's refundStarPayment). */
  refundStars(p: Payment): Promise<void>;
  /** Tells the buyer's chat that the operator refunded the payment. */
  announceRefund(p: Payment): Promise<void>;
}
