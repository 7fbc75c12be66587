/** Row codecs of the key shop's tables on Postgres (pg_migrations.ts version 8): numeric and int8 come back as
 *  strings, read exactly (pg_rows.ts). */
import type { KeyOwner, LedgerEntry, Package, Payment, PaymentMethod } from "./shop_types.ts";

type Row = Record<string, any>;

const bigOrNull = (v: string | null): bigint | null => v === null ? null : BigInt(v);

export function packageRow(p: Package) {
  return {
    id: p.id,
    name: p.name,
    credit_usd: p.creditUsd.toString(),
    price: String(p.price),
    currency: p.currency,
    active: p.active,
  };
}

export function packageFromRow(r: Row): Package {
  return {
    id: r.id,
    name: r.name,
    creditUsd: BigInt(r.credit_usd),
    price: Number(r.price),
    currency: r.currency,
    active: r.active,
  };
}

export function methodFromRow(r: Row): PaymentMethod {
  return { id: r.id, title: r.title, kind: r.kind, available: r.available, details: r.details };
}

export function paymentRow(p: Payment) {
  return {
    id: p.id,
    chat_id: String(p.chatId),
    package_id: p.packageId,
    method_id: p.methodId,
    key_id: p.keyId,
    credit_usd: p.creditUsd.toString(),
    price: String(p.price),
    currency: p.currency,
    status: p.status,
    telegram_charge_id: p.telegramChargeId,
    created_at: String(p.createdAt),
  };
}

export function paymentFromRow(r: Row): Payment {
  return {
    id: r.id,
    chatId: Number(r.chat_id),
    packageId: r.package_id,
    methodId: r.method_id,
    keyId: r.key_id,
    creditUsd: BigInt(r.credit_usd),
    price: Number(r.price),
    currency: r.currency,
    status: r.status,
    telegramChargeId: r.telegram_charge_id,
    createdAt: Number(r.created_at),
  };
}

export function entryRow(e: LedgerEntry) {
  return {
    key_id: e.keyId,
    created_at: String(e.createdAt),
    id: e.id,
    kind: e.kind,
    amount_usd: e.amountUsd.toString(),
    reference: e.reference,
  };
}

export function entryFromRow(r: Row): LedgerEntry {
  return {
    id: r.id,
    keyId: r.key_id,
    kind: r.kind,
    amountUsd: BigInt(r.amount_usd),
    reference: r.reference,
    createdAt: Number(r.created_at),
  };
}

export function ownerRow(o: KeyOwner) {
  return {
    key_id: o.keyId,
    chat_id: String(o.chatId),
    alert_threshold: o.alertThreshold === null ? null : o.alertThreshold.toString(),
    last_credit_usd: o.lastCreditUsd.toString(),
    alerted: o.alerted,
  };
}

export function ownerFromRow(r: Row): KeyOwner {
  return {
    keyId: r.key_id,
    chatId: Number(r.chat_id),
    alertThreshold: bigOrNull(r.alert_threshold),
    lastCreditUsd: BigInt(r.last_credit_usd),
    alerted: r.alerted,
  };
}
