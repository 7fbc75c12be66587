/**
 * The key shop's operator operations on the wire: JSON bodies validated with zod, money as exact
 * decimal USD strings, times as ISO 8601 — shared by the admin HTTP API (src/admin/shop_api.ts) and the CLI's
 * direct mode (scripts/admin/direct.ts), so both answer alike. The key views are the admin API's
 * (src/accounts/key_operations.ts keyView) with the owner chat.
 */
import { z } from "zod";
import { keyView, parseBody } from "../accounts/key_operations.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import { formatUsd, parseUsd } from "../money/usd.ts";
import type { KeyRecord } from "../store/types.ts";
import type { Shop } from "./shop.ts";
import type { LedgerEntry, Package, Payment, PaymentMethod, PaymentStatus, SettleResult } from "./types.ts";

const usd = z.string().regex(/^\d{1,15}(\.\d{1,12})?$/, 'decimal USD string, e.g. "10.00"');
const STATUSES = ["pending", "credited", "refund_due", "refunded", "cancelled"] as const;

const packageFields = {
  name: z.string().min(1).max(64),
  credit_usd: usd,
  price: z.number().int().min(1).max(1_000_000_000),
  currency: z.string().regex(/^[A-Z]{3}$/, "три заглавные латинские буквы, например XTR"),
  active: z.boolean(),
};

export const shopSchemas = {
  createPackage: z.object({ ...packageFields, active: packageFields.active.optional() }).strict(),
  updatePackage: z.object(packageFields).partial().strict(),
  /** At least one field; `details: null` clears the manual method's details. */
  updateMethod: z.object({
    available: z.boolean(),
    title: z.string().min(1).max(64),
    details: z.string().min(1).max(1000).nullable(),
  }).partial().strict().refine((b) => Object.keys(b).length > 0, "укажите available, title или details"),
};

export function packageView(p: Package) {
  return {
    id: p.id,
    object: "package",
    name: p.name,
    credit_usd: formatUsd(p.creditUsd),
    price: p.price,
    currency: p.currency,
    active: p.active,
  };
}

export function methodView(m: PaymentMethod) {
  return {
    id: m.id,
    object: "payment_method",
    title: m.title,
    kind: m.kind,
    available: m.available,
    details: m.details,
  };
}

export function paymentView(p: Payment) {
  return {
    id: p.id,
    object: "payment",
    chat_id: p.chatId,
    package_id: p.packageId,
    method_id: p.methodId,
    key_id: p.keyId,
    credit_usd: formatUsd(p.creditUsd),
    price: p.price,
    currency: p.currency,
    status: p.status,
    telegram_charge_id: p.telegramChargeId,
    created_at: new Date(p.createdAt).toISOString(),
  };
}

export function entryView(e: LedgerEntry) {
  return {
    id: e.id,
    object: "ledger_entry",
    key_id: e.keyId,
    kind: e.kind,
    amount_usd: formatUsd(e.amountUsd),
    reference: e.reference,
    created_at: new Date(e.createdAt).toISOString(),
  };
}

const list = <T>(data: T[]) => ({ object: "list", data });

export async function listPackagesOp(shop: Shop) {
  return list((await shop.listPackages()).map(packageView));
}

export async function createPackageOp(shop: Shop, body: unknown) {
  const b = parseBody(shopSchemas.createPackage, body);
  const p = await shop.createPackage({
    name: b.name,
    creditUsd: parseUsd(b.credit_usd),
    price: b.price,
    currency: b.currency,
    active: b.active ?? true,
  });
  return packageView(p);
}

export async function updatePackageOp(shop: Shop, id: string, body: unknown) {
  const b = parseBody(shopSchemas.updatePackage, body);
  const p = await shop.updatePackage(id, {
    ...(b.name === undefined ? {} : { name: b.name }),
    ...(b.credit_usd === undefined ? {} : { creditUsd: parseUsd(b.credit_usd) }),
    ...(b.price === undefined ? {} : { price: b.price }),
    ...(b.currency === undefined ? {} : { currency: b.currency }),
    ...(b.active === undefined ? {} : { active: b.active }),
  });
  return packageView(p);
}

export async function listMethodsOp(shop: Shop) {
  return list((await shop.listPaymentMethods()).map(methodView));
}

export async function updateMethodOp(shop: Shop, id: string, body: unknown) {
  const b = parseBody(shopSchemas.updateMethod, body);
  return methodView(await shop.updatePaymentMethod(id, b));
}

/** `?chat_id=…` or `?hint=…` (exactly one): the keys with their owner chat (null: not sold by the shop). */
export async function findKeysOp(shop: Shop, query: URLSearchParams, now: number) {
  const chat = query.get("chat_id");
  const hint = query.get("hint");
  if ((chat === null) === (hint === null)) {
    throw new GatewayError("invalid_request", {
      param: "chat_id",
      detail: "укажите chat_id или hint, что-то одно",
    });
  }
  if (chat !== null && !/^-?\d{1,16}$/.test(chat)) {
    throw new GatewayError("invalid_request", {
      param: "chat_id",
      detail: "id чата Telegram (целое число)",
    });
  }
  if (hint !== null && (hint === "" || hint.length > 64)) {
    throw new GatewayError("invalid_request", { param: "hint", detail: "от 1 до 64 символов" });
  }
  const keys = chat !== null ? await shop.keysOfChat(Number(chat)) : await shop.keysByHint(hint!);
  return list(await Promise.all(keys.map((k) => ownedKeyView(shop, k, now))));
}

async function ownedKeyView(shop: Shop, rec: KeyRecord, now: number) {
  const acc = await shop.accounts.find(rec.id);
  if (!acc) throw new GatewayError("key_not_found");
  return {
    ...(await keyView(shop.accounts, acc, now)),
    chat_id: (await shop.keyOwner(rec.id))?.chatId ?? null,
  };
}

export async function ledgerOp(shop: Shop, keyId: string) {
  return list((await shop.ledger(keyId)).map(entryView));
}

/** `?status=…&chat_id=…&limit=…` (each optional), newest first. */
export async function listPaymentsOp(shop: Shop, query: URLSearchParams) {
  const status = query.get("status");
  const chat = query.get("chat_id");
  const limit = query.get("limit");
  if (status !== null && !(STATUSES as readonly string[]).includes(status)) {
    throw new GatewayError("invalid_request", { param: "status", detail: `одно из: ${STATUSES.join(", ")}` });
  }
  if (chat !== null && !/^-?\d{1,16}$/.test(chat)) {
    throw new GatewayError("invalid_request", {
      param: "chat_id",
      detail: "id чата Telegram (целое число)",
    });
  }
  if (limit !== null && (!/^\d{1,4}$/.test(limit) || Number(limit) < 1 || Number(limit) > 1000)) {
    throw new GatewayError("invalid_request", { param: "limit", detail: "от 1 до 1000" });
  }
  const payments = await shop.listPayments({
    ...(status === null ? {} : { status: status as PaymentStatus }),
    ...(chat === null ? {} : { chatId: Number(chat) }),
    ...(limit === null ? {} : { limit: Number(limit) }),
  });
  return list(payments.map(paymentView));
}

/**
 * An operator confirms a manual payment. The bot, when it runs in this process, tells the buyer (and hands
 * over a new key's secret); otherwise the secret of a key this confirmation issued is in the answer (`key`),
 * for the operator to pass on — it is shown nowhere else.
 */
export async function confirmPaymentOp(shop: Shop, id: string, now: number) {
  const r = await shop.confirmPayment(id, now);
  const announced = r.outcome !== "duplicate" && shop.courier !== undefined;
  if (announced) await shop.courier!.announceSettlement(r);
  return settlementView(r, announced);
}

function settlementView(r: SettleResult, announced: boolean) {
  return {
    object: "settlement",
    outcome: r.outcome,
    payment: paymentView(r.payment),
    key_id: r.keyId,
    announced,
    ...(r.newKey !== undefined && !announced ? { key: r.newKey } : {}),
  };
}

export async function refundPaymentOp(shop: Shop, id: string, now: number) {
  return paymentView(await shop.refund(id, now));
}
