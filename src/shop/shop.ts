/**
 * The key shop's operations (issue 20), shared by the Telegram bot (src/bot/), the admin API (src/admin/) and
 * the CLI: packages, payment methods, payments credited exactly once, the key ledger, keys by chat, rotation,
 * low-balance alerts and the bot's update-id idempotency. One Shop per process, built from the store and the
 * key table (src/gateway.ts).
 */
import type { Accounts } from "../accounts/accounts.ts";
import type { Store } from "../store/store.ts";
import type { KeyRecord } from "../store/types.ts";
import type {
  DueAlert,
  LedgerEntry,
  Package,
  Payability,
  Payment,
  PaymentMethod,
  PaymentStatus,
  SettleResult,
} from "./types.ts";

export type PackagePatch = Partial<Omit<Package, "id">>;

const todo = (): never => {
  throw new Error("not implemented");
};

export class Shop {
  constructor(readonly store: Store, readonly accounts: Accounts) {}

  listPackages(_opts?: { activeOnly?: boolean }): Promise<Package[]> {
    return todo();
  }
  createPackage(_p: Omit<Package, "id">): Promise<Package> {
    return todo();
  }
  updatePackage(_id: string, _patch: PackagePatch): Promise<Package> {
    return todo();
  }

  listPaymentMethods(_opts?: { availableOnly?: boolean }): Promise<PaymentMethod[]> {
    return todo();
  }
  setMethodAvailable(_id: string, _available: boolean): Promise<PaymentMethod> {
    return todo();
  }

  /** Checkout: re-checks the package (active) and the method (available now); keyId: top up that key (must
   *  belong to chatId), null: the chat's first purchase issues a key at settlement. */
  createPayment(
    _chatId: number,
    _packageId: string,
    _methodId: string,
    _keyId: string | null,
  ): Promise<Payment> {
    return todo();
  }
  /** pre_checkout_query: still payable? (package active, method available, payment pending, amount and
   *  currency match). */
  checkPayable(_paymentId: string, _price: number, _currency: string): Promise<Payability> {
    return todo();
  }
  /** successful_payment (Stars) or an admin's confirmation (manual): credits exactly once. */
  settlePayment(_paymentId: string, _telegramChargeId: string | null, _now: number): Promise<SettleResult> {
    return todo();
  }
  /** Operator refund: debits the key (refused when its balance cannot cover it) and marks the payment refunded. */
  refundPayment(_paymentId: string, _now: number): Promise<Payment> {
    return todo();
  }
  listPayments(_opts: { status?: PaymentStatus; chatId?: number }): Promise<Payment[]> {
    return todo();
  }
  getPayment(_id: string): Promise<Payment | null> {
    return todo();
  }

  ledger(_keyId: string): Promise<LedgerEntry[]> {
    return todo();
  }
  /** The chat's keys (revoked ones included), oldest first. */
  keysOfChat(_chatId: number): Promise<KeyRecord[]> {
    return todo();
  }
  /** Rotate: a new secret, same id, balance and settings, the old secret refused from the next request on. */
  rotateKey(_chatId: number, _keyId: string): Promise<{ keyId: string; newKey: string }> {
    return todo();
  }
  revokeKey(_chatId: number, _keyId: string): Promise<void> {
    return todo();
  }

  /** Low-balance alerts: threshold per key (null: default = 10% of the last purchase's credit). */
  setAlertThreshold(_chatId: number, _keyId: string, _usd: bigint | null): Promise<void> {
    return todo();
  }
  /** Keys whose balance fell below their threshold since the last alert, each returned once per crossing. */
  dueAlerts(_now: number): Promise<DueAlert[]> {
    return todo();
  }
  /** update_id idempotency for the bot: true the first time an update id is seen (kept for 24 h). */
  firstSeen(_updateId: number, _now: number): Promise<boolean> {
    return todo();
  }
}
