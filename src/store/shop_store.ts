/**
 * The store's part of the key shop (src/shop/): packages, payment methods, payments, the key ledger,
 * who owns a key, and the bot's seen updates. On Deno KV (kv_shop.ts, kv_payments.ts) and Postgres
 * (pg_shop.ts, pg_payments.ts), held to one contract (testing/shop_contract.ts, testing/payment_contract.ts).
 *
 * Money moves exactly once: a payment's credit, its ledger entry and its status change are one atomic step
 * (`settlePayment`), as are a refund's debit, entry and status (`refundPayment`) and an operator top-up with
 * its entry (`creditKey`). The process's in-memory view of the key follows the step (src/accounts/ledger.ts
 * applyCredit, debit), never a second credit.
 */
import type {
  KeyOwner,
  LedgerEntry,
  Package,
  PackagePatch,
  Payment,
  PaymentMethod,
  PaymentMethodPatch,
  PaymentSettlement,
  PaymentStatus,
  RefundedPayment,
  SettledPayment,
} from "./shop_types.ts";

export interface PaymentQuery {
  status?: PaymentStatus;
  chatId?: number;
  /** At most this many, newest first. */
  limit: number;
}

/** Packages, payment methods, who owns a key, key rotation and the bot's seen updates. */
export interface ShopStore {
  /** Every package, oldest first. */
  listPackages(): Promise<Package[]>;
  getPackage(id: string): Promise<Package | null>;
  /** Fails if the id exists. */
  createPackage(p: Package): Promise<void>;
  /** Applies the patch atomically; null for an unknown id. */
  updatePackage(id: string, patch: PackagePatch): Promise<Package | null>;

  /** Every payment method, the seed's first (SEED_PAYMENT_METHODS), then by id. */
  listPaymentMethods(): Promise<PaymentMethod[]>;
  getPaymentMethod(id: string): Promise<PaymentMethod | null>;
  /** Applies the patch atomically; null for an unknown id. */
  updatePaymentMethod(id: string, patch: PaymentMethodPatch): Promise<PaymentMethod | null>;

  getKeyOwner(keyId: string): Promise<KeyOwner | null>;
  /** The keys a chat owns, by key id; every owned key when `chatId` is undefined. */
  listKeyOwners(chatId?: number): Promise<KeyOwner[]>;
  /**
   * Changes a key's owner record in one atomic step: `change` gets the current record and returns the new
   * one, or null to leave it. Resolves with the record written, or null (unknown key or nothing changed).
   * `change` must be pure: an optimistic store may call it again.
   */
  updateKeyOwner(keyId: string, change: (o: KeyOwner) => KeyOwner | null): Promise<KeyOwner | null>;
  /** Ids of the keys whose hint is `hint` (admin support lookups). */
  keyIdsByHint(hint: string): Promise<string[]>;
  /**
   * Replaces a key's hash and hint (rotation) if its hash is still `oldHash`, in one atomic step with the
   * lookup by hash (the old hash finds nothing from then on) and a key change stamp (store.ts keyChanges).
   * False when the hash changed meanwhile or the key is unknown. Store.updateKey never changes the hash.
   */
  rotateKeyHash(keyId: string, oldHash: string, next: { hash: string; hint: string }): Promise<boolean>;

  /** True the first time `updateId` is seen (kept `ttlMs` from `now`; once expired it counts as new). */
  firstSeen(updateId: number, now: number, ttlMs: number): Promise<boolean>;
}

/** Payments and the key ledger: every step that moves a key's credit with its entry. */
export interface PaymentStore {
  /** Stores a new payment (status pending). Fails if the id exists. */
  createPayment(p: Payment): Promise<void>;
  getPayment(id: string): Promise<Payment | null>;
  /** Payments by status and/or chat, newest first (by createdAt, then id). */
  listPayments(q: PaymentQuery): Promise<Payment[]>;
  /** pending → cancelled; the payment as it is after (unchanged unless it was pending), null if unknown. */
  cancelPayment(id: string): Promise<Payment | null>;
  /**
   * In one atomic step, idempotent on the payment id and on the charge id: a pending payment whose charge id
   * is not yet recorded takes `s` (shop_types.ts PaymentSettlement) — its status, key and charge id, the
   * ledger entry, the credit added to the key's `credited` counter (or the new key created with it) and the
   * owner's last purchase; any other payment, or a charge id already recorded, is a duplicate and nothing
   * is written. Two steps for one payment or one charge id at once, from any processes: exactly one writes.
   * Unknown payment: rejects.
   */
  settlePayment(s: PaymentSettlement): Promise<SettledPayment>;
  /**
   * In one atomic step: a credited payment whose key's free credit at `now` (credited − spent − the live
   * leases of every holder) covers its credit becomes refunded, the credit is taken from the key's `credited`
   * and `entry` (a debit of that amount) is written; a refund_due payment becomes refunded with no money
   * moved and no entry. Unknown payment: rejects.
   */
  refundPayment(paymentId: string, entry: LedgerEntry, now: number): Promise<RefundedPayment>;
  /** Adds `entry.amountUsd` (a credit) to the key's `credited` counter with the entry, in one atomic step;
   *  false (nothing written) for an unknown key. */
  creditKey(entry: LedgerEntry): Promise<boolean>;
  /** A key's ledger entries, oldest first (by createdAt, then id). */
  listLedger(keyId: string): Promise<LedgerEntry[]>;
}
