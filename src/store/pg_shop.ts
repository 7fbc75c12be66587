/**
 * The key shop's catalog and bookkeeping on Postgres (shop_store.ts): packages, payment methods (seeded by
 * migration 9), key owners, the lookup by hint, key rotation and the bot's seen updates. A read-modify-write
 * is one statement or a transaction over the row locked first.
 */
import type { Sql } from "./pg_connect.ts";
import { methodFromRow, ownerFromRow, ownerRow, packageFromRow, packageRow } from "./pg_shop_rows.ts";
import type { KeyOwner, Package, PackagePatch, PaymentMethod, PaymentMethodPatch } from "./shop_types.ts";

export async function listPackages(sql: Sql): Promise<Package[]> {
  return (await sql`SELECT * FROM shop_packages ORDER BY id`).map(packageFromRow);
}

export async function getPackage(sql: Sql, id: string): Promise<Package | null> {
  const [row] = await sql`SELECT * FROM shop_packages WHERE id = ${id}`;
  return row ? packageFromRow(row) : null;
}

export async function createPackage(sql: Sql, p: Package): Promise<void> {
  try {
    await sql`INSERT INTO shop_packages ${sql(packageRow(p))}`;
  } catch (err) {
    if ((err as { code?: string }).code === "23505") throw new Error("package already exists");
    throw err;
  }
}

export async function updatePackage(sql: Sql, id: string, patch: PackagePatch): Promise<Package | null> {
  const set: Record<string, string | boolean> = {};
  if (patch.name !== undefined) set.name = patch.name;
  if (patch.creditUsd !== undefined) set.credit_usd = patch.creditUsd.toString();
  if (patch.price !== undefined) set.price = String(patch.price);
  if (patch.currency !== undefined) set.currency = patch.currency;
  if (patch.active !== undefined) set.active = patch.active;
  if (Object.keys(set).length === 0) return await getPackage(sql, id);
  const [row] = await sql`UPDATE shop_packages SET ${sql(set)} WHERE id = ${id} RETURNING *`;
  return row ? packageFromRow(row) : null;
}

export async function listPaymentMethods(sql: Sql): Promise<PaymentMethod[]> {
  return (await sql`SELECT * FROM payment_methods ORDER BY id`).map(methodFromRow);
}

export async function getPaymentMethod(sql: Sql, id: string): Promise<PaymentMethod | null> {
  const [row] = await sql`SELECT * FROM payment_methods WHERE id = ${id}`;
  return row ? methodFromRow(row) : null;
}

export async function updatePaymentMethod(
  sql: Sql,
  id: string,
  patch: PaymentMethodPatch,
): Promise<PaymentMethod | null> {
  const set: Record<string, string | boolean | null> = {};
  if (patch.title !== undefined) set.title = patch.title;
  if (patch.available !== undefined) set.available = patch.available;
  if (patch.details !== undefined) set.details = patch.details;
  if (Object.keys(set).length === 0) return await getPaymentMethod(sql, id);
  const [row] = await sql`UPDATE payment_methods SET ${sql(set)} WHERE id = ${id} RETURNING *`;
  return row ? methodFromRow(row) : null;
}

export async function getKeyOwner(sql: Sql, keyId: string): Promise<KeyOwner | null> {
  const [row] = await sql`SELECT * FROM key_owners WHERE key_id = ${keyId}`;
  return row ? ownerFromRow(row) : null;
}

export async function listKeyOwners(sql: Sql, chatId?: number): Promise<KeyOwner[]> {
  const rows = chatId === undefined
    ? await sql`SELECT * FROM key_owners ORDER BY key_id`
    : await sql`SELECT * FROM key_owners WHERE chat_id = ${chatId} ORDER BY key_id`;
  return rows.map(ownerFromRow);
}

export function updateKeyOwner(
  sql: Sql,
  keyId: string,
  change: (o: KeyOwner) => KeyOwner | null,
): Promise<KeyOwner | null> {
  return sql.begin(async (tx) => {
    const [row] = await tx`SELECT * FROM key_owners WHERE key_id = ${keyId} FOR UPDATE`;
    if (!row) return null;
    const current = ownerFromRow(row);
    const next = change(current);
    if (next === null) return null;
    const owner = { ...next, keyId, chatId: current.chatId };
    const { key_id: _k, chat_id: _c, ...set } = ownerRow(owner);
    await tx`UPDATE key_owners SET ${tx(set)} WHERE key_id = ${keyId}`;
    return owner;
  });
}

/** Served by keys_hint. */
export async function keyIdsByHint(sql: Sql, hint: string): Promise<string[]> {
  return (await sql`SELECT id FROM keys WHERE hint = ${hint} ORDER BY id`).map((r) => r.id as string);
}

/** The stamp makes other processes read the key again (key_refresh.ts), and drop the old hash from memory. */
export async function rotateKeyHash(
  sql: Sql,
  keyId: string,
  oldHash: string,
  next: { hash: string; hint: string },
): Promise<boolean> {
  const rows = await sql`
    UPDATE keys SET hash = ${next.hash}, hint = ${next.hint}, changed_at = ${Date.now()}
    WHERE id = ${keyId} AND hash = ${oldHash} RETURNING id`;
  return rows.length > 0;
}

/** A row whose lifetime ended counts as absent, and is taken over. */
export async function firstSeen(sql: Sql, updateId: number, now: number, ttlMs: number): Promise<boolean> {
  const rows = await sql`
    INSERT INTO bot_updates (update_id, expires_at) VALUES (${updateId}, ${now + ttlMs})
    ON CONFLICT (update_id) DO UPDATE SET expires_at = EXCLUDED.expires_at
    WHERE bot_updates.expires_at <= ${now}
    RETURNING update_id`;
  return rows.length > 0;
}
