/**
 * The key shop's operations (spec §1.6, §5.5), shared by the Telegram bot (src/bot/), the admin API
 * (src/admin/shop_api.ts) and the CLI: packages, payment methods, payments credited exactly once, the key
 * ledger, keys by chat, rotation, low-balance alerts and the bot's update-id idempotency. One Shop per process,
 * built from the store and the key table (src/gateway.ts).
 *
 * Money exactly once. A payment's credit, its ledger entry ("payment:<id>") and its status change are one
 * atomic store step (Store.settlePayment), idempotent on the payment id and on Telegram's charge id, safe
 * across processes (the store checks what it read: KV versionstamps, Postgres row locks and a unique charge
 * id). That step is the source of truth: the credit goes straight onto the key's `credited` counter in the
 * store, and this process's in-memory view of the key then follows it (Ledger.applyCredit) — no second credit
 * delta through the group commit, so a crash between the two loses nothing (a restart reads the store) and
 * the ledger identity credited = balance + held + spent holds in memory as in the store. A first purchase's
 * key is created inside the same step (Accounts.draft, then adopt). A refund is the mirror image: one store
 * step debits `credited`, writes the "refund:<id>" entry and marks the payment refunded, refused while the
 * key's free credit cannot cover it; the ledger guards it in memory first (Ledger.debit). Operator top-ups and
 * key creation write their entries ("admin:topup", "initial") the same way (src/accounts/accounts.ts).
 */
import type { Accounts } from "../accounts/accounts.ts";
import { ledgerEntry } from "../accounts/ledger_entry.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import type { RefundedPayment } from "../store/shop_types.ts";
import type { Store } from "../store/store.ts";
import type { KeyRecord } from "../store/types.ts";
import { idGenerator } from "../util/ids.ts";
import type {
  DueAlert,
  KeyOwner,
  LedgerEntry,
  Package,
  PackagePatch,
  Payability,
  Payment,
  PaymentMethod,
  PaymentMethodPatch,
  PaymentStatus,
  SettleResult,
  ShopCourier,
} from "./types.ts";
import { checkPackage, checkThreshold } from "./validate.ts";

/** How long a Telegram update id is remembered (Telegram gives up redelivering long before). */
const SEEN_UPDATE_TTL_MS = 24 * 3_600_000;
/** Payments listed at most, newest first. */
const LIST_LIMIT = 100;
/** The default alert threshold: this fraction of the key's last purchase. */
const DEFAULT_ALERT_DIVISOR = 10n;

export class Shop {
  readonly #newId = idGenerator();
  /** Set by the bot when it runs in this process, for what operators do outside the chat. */
  courier: ShopCourier | undefined;

  constructor(readonly store: Store, readonly accounts: Accounts) {}

  /** Sorted for the buyer: by currency, then price, then name. */
  async listPackages(opts: { activeOnly?: boolean } = {}): Promise<Package[]> {
    const all = await this.store.listPackages();
    return all.filter((p) => !opts.activeOnly || p.active)
      .sort((a, b) =>
        cmp(a.currency, b.currency) || a.price - b.price || cmp(a.name, b.name) || cmp(a.id, b.id)
      );
  }

  async createPackage(p: Omit<Package, "id">): Promise<Package> {
    checkPackage(p);
    const pkg = { ...p, name: p.name.trim(), id: this.#newId("pkg_") };
    await this.store.createPackage(pkg);
    return pkg;
  }

  async updatePackage(id: string, patch: PackagePatch): Promise<Package> {
    checkPackage(patch);
    const next = await this.store.updatePackage(
      id,
      patch.name === undefined ? patch : { ...patch, name: patch.name.trim() },
    );
    if (!next) throw new GatewayError("package_not_found");
    return next;
  }

  async listPaymentMethods(opts: { availableOnly?: boolean } = {}): Promise<PaymentMethod[]> {
    return (await this.store.listPaymentMethods()).filter((m) => !opts.availableOnly || m.available);
  }

  setMethodAvailable(id: string, available: boolean): Promise<PaymentMethod> {
    return this.updatePaymentMethod(id, { available });
  }

  async updatePaymentMethod(id: string, patch: PaymentMethodPatch): Promise<PaymentMethod> {
    const next = await this.store.updatePaymentMethod(id, patch);
    if (!next) throw new GatewayError("payment_method_not_found");
    return next;
  }

  /** Checkout: re-checks the package (active) and the method (available now, and Stars only for XTR
   *  packages); `keyId`: top up that key (the chat's own, not revoked), null: the settlement issues a key. */
  async createPayment(
    chatId: number,
    packageId: string,
    methodId: string,
    keyId: string | null,
  ): Promise<Payment> {
    const [pkg, method] = await Promise.all([this.#package(packageId), this.#method(methodId)]);
    if (!pkg.active) throw new GatewayError("package_inactive");
    if (!method.available) throw new GatewayError("payment_method_unavailable");
    if (method.kind === "stars" && pkg.currency !== "XTR") {
      throw new GatewayError("payment_method_unavailable", { detail: "Звёздами оплачиваются пакеты в XTR." });
    }
    if (keyId !== null && (await this.#owned(chatId, keyId)).revoked) throw new GatewayError("key_revoked");
    const payment: Payment = {
      id: this.#newId("pay_"),
      chatId,
      packageId,
      methodId,
      keyId,
      creditUsd: pkg.creditUsd,
      price: pkg.price,
      currency: pkg.currency,
      status: "pending",
      telegramChargeId: null,
      createdAt: Date.now(),
    };
    await this.store.createPayment(payment);
    return payment;
  }

  async getPayment(id: string): Promise<Payment | null> {
    return await this.store.getPayment(id);
  }

  /**
   * pre_checkout_query: the payment is pending, its package active, its method available, and the invoice's
   * amount and currency are the payment's. A pending payment that fails is cancelled: Telegram takes no money
   * for a refused pre-checkout, and money that comes anyway is recorded refund_due (settlePayment).
   */
  async checkPayable(paymentId: string, price: number, currency: string): Promise<Payability> {
    const p = await this.store.getPayment(paymentId);
    if (!p) return { ok: false, reason: "Счёт не найден. Откройте /buy." };
    if (p.status !== "pending") return { ok: false, reason: "Счёт уже оплачен или отменён. Откройте /buy." };
    const reason = p.price !== price || p.currency !== currency
      ? "Сумма счёта не совпадает с заказом. Откройте /buy."
      : await this.#unpayable(p);
    if (reason === null) return { ok: true };
    await this.store.cancelPayment(p.id);
    return { ok: false, reason };
  }

  /**
   * successful_payment (Stars) or an admin's confirmation (manual): credits exactly once (see the top of the
   * file). A payment whose method was switched off or whose package was deactivated after the invoice, or
   * whose key was revoked, or that was cancelled, is recorded refund_due and nothing is credited. A first
   * purchase issues the key here and returns its secret once (`newKey`).
   */
  async settlePayment(
    paymentId: string,
    telegramChargeId: string | null,
    now: number,
  ): Promise<SettleResult> {
    const p = await this.store.getPayment(paymentId);
    if (!p) throw new GatewayError("payment_not_found");
    // Found before the step, so this process's view is the one from before the credit (Accounts.find may
    // read a shared store's key, which would already hold it).
    const acc = p.keyId === null ? undefined : await this.accounts.find(p.keyId);
    const creditable = p.status === "pending" && await this.#unpayable(p) === null;
    const draft = creditable && p.keyId === null
      ? await this.accounts.draft({ balance: p.creditUsd }, now)
      : undefined;
    const keyId = p.keyId ?? draft?.rec.id ?? "";
    const settled = await this.store.settlePayment({
      paymentId,
      telegramChargeId,
      credit: creditable
        ? {
          entry: ledgerEntry(keyId, "credit", p.creditUsd, `payment:${p.id}`, now),
          ...(draft ? { newKey: draft.rec } : {}),
        }
        : null,
    });
    const result: SettleResult = {
      outcome: settled.outcome,
      payment: settled.payment,
      keyId: settled.payment.keyId,
    };
    if (settled.outcome !== "credited") return result;
    if (draft) {
      this.accounts.adopt(draft.rec);
      result.newKey = draft.key;
    } else if (acc) this.accounts.ledger.applyCredit(acc, p.creditUsd);
    return result;
  }

  /** An admin's confirmation of a manual payment (the admin API and the CLI; the bot's /confirm). */
  async confirmPayment(paymentId: string, now: number): Promise<SettleResult> {
    const p = await this.store.getPayment(paymentId);
    if (!p) throw new GatewayError("payment_not_found");
    if ((await this.#method(p.methodId)).kind !== "manual") throw new GatewayError("payment_not_manual");
    return await this.settlePayment(paymentId, null, now);
  }

  /**
   * Operator refund, the books only: a credited payment debits its key (a debit entry "refund:<id>", refused
   * with refund_exceeds_balance while the key's free credit cannot cover it) and becomes refunded; a refund_due
   * one becomes refunded with no money moved. Stars go back through the bot (`refund` below does both).
   */
  async refundPayment(paymentId: string, now: number): Promise<Payment> {
    const p = await this.store.getPayment(paymentId);
    if (!p) throw new GatewayError("payment_not_found");
    // A refund_due payment moved no money: its step writes no entry.
    const entry = ledgerEntry(p.keyId ?? "", "debit", p.creditUsd, `refund:${p.id}`, now);
    if (p.status === "refund_due") return refunded(await this.store.refundPayment(p.id, entry, now));
    if (p.status !== "credited" || p.keyId === null) throw new GatewayError("payment_not_refundable");
    const acc = await this.accounts.find(p.keyId);
    if (!acc) throw new GatewayError("key_not_found");
    let step: RefundedPayment | undefined;
    const outcome = await this.accounts.ledger.debit(acc, p.creditUsd, async () => {
      step = await this.store.refundPayment(p.id, entry, now);
      return step.outcome === "refunded"
        ? "debited"
        : step.outcome === "insufficient"
        ? "insufficient"
        : "unchanged";
    });
    if (outcome === "insufficient") throw new GatewayError("refund_exceeds_balance");
    return refunded(step!);
  }

  /**
   * The operator's whole refund (the admin API and the CLI): refused first when the books would refuse it,
   * then a Stars payment's Stars returned through the bot (stars_refund_unavailable when no bot runs here),
   * then the books (refundPayment) and the buyer told. The same order as the bot's own /refund.
   */
  async refund(paymentId: string, now: number): Promise<Payment> {
    const p = await this.store.getPayment(paymentId);
    if (!p) throw new GatewayError("payment_not_found");
    if (p.status !== "credited" && p.status !== "refund_due") {
      throw new GatewayError("payment_not_refundable");
    }
    if (p.status === "credited" && !(await this.#covers(p))) throw new GatewayError("refund_exceeds_balance");
    if ((await this.#method(p.methodId)).kind === "stars" && p.telegramChargeId !== null) {
      if (!this.courier) throw new GatewayError("stars_refund_unavailable");
      await this.courier.refundStars(p);
    }
    const refunded = await this.refundPayment(paymentId, now);
    await this.courier?.announceRefund(refunded);
    return refunded;
  }

  async listPayments(
    opts: { status?: PaymentStatus; chatId?: number; limit?: number } = {},
  ): Promise<Payment[]> {
    return await this.store.listPayments({ ...opts, limit: opts.limit ?? LIST_LIMIT });
  }

  /** A key's credits and debits, oldest first; key_not_found for an unknown key. */
  async ledger(keyId: string): Promise<LedgerEntry[]> {
    if (!await this.accounts.find(keyId)) throw new GatewayError("key_not_found");
    return await this.store.listLedger(keyId);
  }

  /** The chat's keys (revoked ones too), oldest first, their money as the store has it now. */
  async keysOfChat(chatId: number): Promise<KeyRecord[]> {
    const keys: KeyRecord[] = [];
    for (const owner of await this.store.listKeyOwners(chatId)) {
      const rec = await this.#record(owner.keyId);
      if (rec) keys.push(rec);
    }
    return keys.sort((a, b) => a.createdAt - b.createdAt || cmp(a.id, b.id));
  }

  /** The owner record of a key (its chat and alert); null for a key the shop did not sell. */
  keyOwner(keyId: string): Promise<KeyOwner | null> {
    return this.store.getKeyOwner(keyId);
  }

  /** Keys by their hint (support lookups), their money as the store has it now. */
  async keysByHint(hint: string): Promise<KeyRecord[]> {
    const keys: KeyRecord[] = [];
    for (const id of await this.store.keyIdsByHint(hint)) {
      const rec = await this.#record(id);
      if (rec) keys.push(rec);
    }
    return keys;
  }

  /** Rotate: a new secret for the same key id — balance, caps, theta settings and usage history stay — the
   *  old one refused from the next request on (Accounts.rotate); the new secret is returned once. */
  async rotateKey(chatId: number, keyId: string): Promise<{ keyId: string; newKey: string }> {
    if ((await this.#owned(chatId, keyId)).revoked) throw new GatewayError("key_revoked");
    const rotated = await this.accounts.rotate(keyId);
    if (!rotated) throw new GatewayError("key_not_found");
    return { keyId, newKey: rotated.key };
  }

  async revokeKey(chatId: number, keyId: string): Promise<void> {
    await this.#owned(chatId, keyId);
    await this.accounts.update(keyId, (r) => {
      r.revoked = true;
    });
  }

  /** Low-balance alerts: threshold per key (null: 10% of the last purchase's credit). A new threshold starts
   *  a new crossing: a balance already below it is alerted at the next check. */
  async setAlertThreshold(chatId: number, keyId: string, usd: bigint | null): Promise<void> {
    checkThreshold(usd);
    await this.#owned(chatId, keyId);
    await this.store.updateKeyOwner(keyId, (o) => ({ ...o, alertThreshold: usd, alerted: false }));
  }

  /**
   * Keys whose settled balance is below their threshold and not alerted yet: each is returned once per
   * crossing — the "alerted" mark is set in one atomic step that only one caller wins, so two processes never
   * both send it — and the mark is cleared once the balance is back at or above the threshold. Revoked keys
   * are skipped.
   */
  async dueAlerts(_now: number): Promise<DueAlert[]> {
    const due: DueAlert[] = [];
    for (const owner of await this.store.listKeyOwners()) {
      const rec = await this.#record(owner.keyId);
      if (!rec || rec.revoked) continue;
      const threshold = owner.alertThreshold ?? owner.lastCreditUsd / DEFAULT_ALERT_DIVISOR;
      const below = rec.balance < threshold;
      if (below === owner.alerted) continue;
      const won = await this.store.updateKeyOwner(
        owner.keyId,
        (o) => o.alerted === below ? null : { ...o, alerted: below },
      );
      if (won && below) {
        due.push({ chatId: owner.chatId, keyId: rec.id, hint: rec.hint, balance: rec.balance, threshold });
      }
    }
    return due;
  }

  /** update_id idempotency for the bot: true the first time an update id is seen (kept for 24 h). */
  firstSeen(updateId: number, now: number): Promise<boolean> {
    return this.store.firstSeen(updateId, now, SEEN_UPDATE_TTL_MS);
  }

  async #package(id: string): Promise<Package> {
    const p = await this.store.getPackage(id);
    if (!p) throw new GatewayError("package_not_found");
    return p;
  }

  async #method(id: string): Promise<PaymentMethod> {
    const m = await this.store.getPaymentMethod(id);
    if (!m) throw new GatewayError("payment_method_not_found");
    return m;
  }

  /** Why the payment cannot be taken now (its package or method switched off), or null. */
  async #unpayable(p: Payment): Promise<string | null> {
    const [pkg, method] = await Promise.all([
      this.store.getPackage(p.packageId),
      this.store.getPaymentMethod(p.methodId),
    ]);
    if (!pkg?.active) return "Этот пакет больше не продаётся. Откройте /buy.";
    if (!method?.available) return "Этот способ оплаты сейчас недоступен. Откройте /buy.";
    return null;
  }

  /** The chat's key: key_not_found for another chat's key as for an unknown one (no chat learns of others'). */
  async #owned(chatId: number, keyId: string): Promise<KeyRecord> {
    const owner = await this.store.getKeyOwner(keyId);
    const rec = owner?.chatId === chatId ? await this.#record(keyId) : null;
    if (!rec) throw new GatewayError("key_not_found");
    return rec;
  }

  /** A copy of the key's record, its money brought up to date from a shared store (Accounts.syncMoney). */
  async #record(keyId: string): Promise<KeyRecord | null> {
    const acc = await this.accounts.find(keyId);
    if (!acc) return null;
    await this.accounts.syncMoney(acc);
    return { ...acc.rec, caps: { ...acc.rec.caps } };
  }

  /** Whether the books would take a refund of `p` now (Accounts.debitable): checked before any Stars go back. */
  async #covers(p: Payment): Promise<boolean> {
    const acc = p.keyId === null ? undefined : await this.accounts.find(p.keyId);
    return acc !== undefined && await this.accounts.debitable(acc) >= p.creditUsd;
  }
}

/** A refund step's answer as the payment refunded, or its refusal. */
function refunded(r: RefundedPayment): Payment {
  if (r.outcome === "insufficient") throw new GatewayError("refund_exceeds_balance");
  if (r.outcome !== "refunded") throw new GatewayError("payment_not_refundable");
  return r.payment;
}

const cmp = (a: string, b: string) => a < b ? -1 : a > b ? 1 : 0;
