/**
 * The key shop's catalog and bookkeeping on Postgres (shop_store.ts): packages, payment methods (seeded by
 * migration 9), key owners, the lookup by hint, key rotation and the bot's seen updates. A read-modify-write
 * is one statement or a transaction over the row locked first.
 */
import type { Sql } from "./pg_connect.ts";
import type { ShopStore } from "./shop_store.ts";
import { methodFromRow, ownerFromRow, ownerRow, packageFromRow, packageRow } from "./pg_shop_rows.ts";
import type { KeyOwner, Package, PackagePatch, PaymentMethod, PaymentMethodPatch } from "./shop_types.ts";

export class PgShop implements ShopStore {
  constructor(private readonly sql: Sql) {}

  async listPackages(): Promise<Package[]> {
    return (await this.sql`SELECT * FROM shop_packages ORDER BY id`).map(packageFromRow);
  }

  async getPackage(id: string): Promise<Package | null> {
    const [row] = await this.sql`SELECT * FROM shop_packages WHERE id = ${id}`;
    return row ? packageFromRow(row) : null;
  }

  async createPackage(p: Package): Promise<void> {
    try {
      await this.sql`INSERT INTO shop_packages ${this.sql(packageRow(p))}`;
    } catch (err) {
      if ((err as { code?: string }).code === "23505") throw new Error("package already exists");
      throw err;
    }
  }

  async updatePackage(id: string, patch: PackagePatch): Promise<Package | null> {
    const set: Record<string, string | boolean> = {};
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.creditUsd !== undefined) set.credit_usd = patch.creditUsd.toString();
    if (patch.price !== undefined) set.price = String(patch.price);
    if (patch.currency !== undefined) set.currency = patch.currency;
    if (patch.active !== undefined) set.active = patch.active;
    if (Object.keys(set).length === 0) return await this.getPackage(id);
    const [row] = await this.sql`UPDATE shop_packages SET ${this.sql(set)} WHERE id = ${id} RETURNING *`;
    return row ? packageFromRow(row) : null;
  }

  async listPaymentMethods(): Promise<PaymentMethod[]> {
    return (await this.sql`SELECT * FROM payment_methods ORDER BY id`).map(methodFromRow);
  }

  async getPaymentMethod(id: string): Promise<PaymentMethod | null> {
    const [row] = await this.sql`SELECT * FROM payment_methods WHERE id = ${id}`;
    return row ? methodFromRow(row) : null;
  }

  async updatePaymentMethod(id: string, patch: PaymentMethodPatch): Promise<PaymentMethod | null> {
    const set: Record<string, string | boolean | null> = {};
    if (patch.title !== undefined) set.title = patch.title;
    if (patch.available !== undefined) set.available = patch.available;
    if (patch.details !== undefined) set.details = patch.details;
    if (Object.keys(set).length === 0) return await this.getPaymentMethod(id);
    const [row] = await this.sql`UPDATE payment_methods SET ${this.sql(set)} WHERE id = ${id} RETURNING *`;
    return row ? methodFromRow(row) : null;
  }

  async getKeyOwner(keyId: string): Promise<KeyOwner | null> {
    const [row] = await this.sql`SELECT * FROM key_owners WHERE key_id = ${keyId}`;
    return row ? ownerFromRow(row) : null;
  }

  async listKeyOwners(chatId?: number): Promise<KeyOwner[]> {
    const rows = chatId === undefined
      ? await this.sql`SELECT * FROM key_owners ORDER BY key_id`
      : await this.sql`SELECT * FROM key_owners WHERE chat_id = ${chatId} ORDER BY key_id`;
    return rows.map(ownerFromRow);
  }

  updateKeyOwner(keyId: string, change: (o: KeyOwner) => KeyOwner | null): Promise<KeyOwner | null> {
    return this.sql.begin(async (tx) => {
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
  async keyIdsByHint(hint: string): Promise<string[]> {
    return (await this.sql`SELECT id FROM keys WHERE hint = ${hint} ORDER BY id`).map((r) => r.id as string);
  }

  /** The stamp makes other processes read the key again (key_refresh.ts), and drop the old hash from memory. */
  async rotateKeyHash(
    keyId: string,
    oldHash: string,
    next: { hash: string; hint: string },
  ): Promise<boolean> {
    const rows = await this.sql`
      UPDATE keys SET hash = ${next.hash}, hint = ${next.hint}, changed_at = ${Date.now()}
      WHERE id = ${keyId} AND hash = ${oldHash} RETURNING id`;
    return rows.length > 0;
  }

  /** A row whose lifetime ended counts as absent, and is taken over. */
  async firstSeen(updateId: number, now: number, ttlMs: number): Promise<boolean> {
    const rows = await this.sql`
      INSERT INTO bot_updates (update_id, expires_at) VALUES (${updateId}, ${now + ttlMs})
      ON CONFLICT (update_id) DO UPDATE SET expires_at = EXCLUDED.expires_at
      WHERE bot_updates.expires_at <= ${now}
      RETURNING update_id`;
    return rows.length > 0;
  }
}
