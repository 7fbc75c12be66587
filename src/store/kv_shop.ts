/**
 * The key shop's catalog and bookkeeping on Deno KV (shop_store.ts): packages, payment methods (a method never
 * written reads as its seed), key owners, the lookup by hint, and the bot's seen updates. Every
 * read-modify-write is a checked write retried on a lost check (kv_atomic.ts); the money steps are in
 * kv_payments.ts.
 */
import { commitChecked, isLockedError, optimistic } from "./kv_atomic.ts";
import { kvKeys } from "./kv_keys.ts";
import type { ShopStore } from "./shop_store.ts";
import { markChanged } from "./kv_key_writes.ts";
import {
  type KeyOwner,
  type Package,
  type PackagePatch,
  type PaymentMethod,
  type PaymentMethodPatch,
  SEED_PAYMENT_METHODS,
} from "./shop_types.ts";
import type { KeyMeta, KeyRecord } from "./types.ts";

/** Deno KV reads at most 10 keys in one `getMany`. */
const MAX_READ = 10;

export class KvShop implements ShopStore {
  constructor(private readonly kv: Deno.Kv) {}

  async listPackages(): Promise<Package[]> {
    const out: Package[] = [];
    for await (const e of this.kv.list<Package>({ prefix: kvKeys.shopPackagePrefix() })) out.push(e.value);
    return out;
  }

  async getPackage(id: string): Promise<Package | null> {
    return (await this.kv.get<Package>(kvKeys.shopPackage(id))).value;
  }

  async createPackage(p: Package): Promise<void> {
    const created = await optimistic("createPackage", () =>
      tryCommit(
        this.kv.atomic().check({ key: kvKeys.shopPackage(p.id), versionstamp: null }).set(
          kvKeys.shopPackage(p.id),
          p,
        ),
      ));
    if (!created) throw new Error("package already exists");
  }

  updatePackage(id: string, patch: PackagePatch): Promise<Package | null> {
    return optimistic("updatePackage", async () => {
      const e = await this.kv.get<Package>(kvKeys.shopPackage(id));
      if (e.value === null) return { value: null };
      const next = { ...e.value, ...patch, id };
      return await commitChecked(this.kv.atomic().check(e).set(e.key, next)) ? { value: next } : null;
    });
  }

  async listPaymentMethods(): Promise<PaymentMethod[]> {
    const byId = new Map(SEED_PAYMENT_METHODS.map((m) => [m.id, m]));
    for await (const e of this.kv.list<PaymentMethod>({ prefix: kvKeys.paymentMethodPrefix() })) {
      byId.set(e.value.id, e.value);
    }
    return [...byId.values()].sort((a, b) => a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  }

  async getPaymentMethod(id: string): Promise<PaymentMethod | null> {
    return (await this.kv.get<PaymentMethod>(kvKeys.paymentMethod(id))).value ?? seed(id);
  }

  updatePaymentMethod(id: string, patch: PaymentMethodPatch): Promise<PaymentMethod | null> {
    return optimistic("updatePaymentMethod", async () => {
      const e = await this.kv.get<PaymentMethod>(kvKeys.paymentMethod(id));
      const current = e.value ?? seed(id);
      if (current === null) return { value: null };
      const next = { ...current, ...patch };
      return await commitChecked(this.kv.atomic().check(e).set(e.key, next)) ? { value: next } : null;
    });
  }

  async getKeyOwner(keyId: string): Promise<KeyOwner | null> {
    return (await this.kv.get<KeyOwner>(kvKeys.keyOwner(keyId))).value;
  }

  async listKeyOwners(chatId?: number): Promise<KeyOwner[]> {
    const out: KeyOwner[] = [];
    if (chatId === undefined) {
      for await (const e of this.kv.list<KeyOwner>({ prefix: kvKeys.keyOwnerPrefix() })) out.push(e.value);
      return out;
    }
    const ids: string[] = [];
    for await (const e of this.kv.list({ prefix: kvKeys.chatKeyPrefix(chatId) })) {
      ids.push(e.key[2] as string);
    }
    for (let i = 0; i < ids.length; i += MAX_READ) {
      const read = await this.kv.getMany<KeyOwner[]>(
        ids.slice(i, i + MAX_READ).map((id) => kvKeys.keyOwner(id)),
      );
      for (const e of read) if (e.value !== null) out.push(e.value);
    }
    return out;
  }

  updateKeyOwner(keyId: string, change: (o: KeyOwner) => KeyOwner | null): Promise<KeyOwner | null> {
    return optimistic("updateKeyOwner", async () => {
      const e = await this.kv.get<KeyOwner>(kvKeys.keyOwner(keyId));
      if (e.value === null) return { value: null };
      const next = change(e.value);
      if (next === null) return { value: null };
      const owner = { ...next, keyId, chatId: e.value.chatId };
      return await commitChecked(this.kv.atomic().check(e).set(e.key, owner)) ? { value: owner } : null;
    });
  }

  /** A scan of the key records (an operator's support lookup, not a request path). */
  async keyIdsByHint(hint: string): Promise<string[]> {
    const ids: string[] = [];
    for await (const e of this.kv.list<KeyMeta>({ prefix: kvKeys.keyPrefix() })) {
      if (e.value.hint === hint) ids.push(e.value.id);
    }
    return ids;
  }

  rotateKeyHash(keyId: string, oldHash: string, next: { hash: string; hint: string }): Promise<boolean> {
    return optimistic("rotateKeyHash", async () => {
      const e = await this.kv.get<KeyMeta | KeyRecord>(kvKeys.key(keyId));
      if (e.value === null || e.value.hash !== oldHash) return { value: false };
      const op = this.kv.atomic().check(e)
        .check({ key: kvKeys.keyByHash(next.hash), versionstamp: null })
        .set(e.key, { ...e.value, ...next })
        .delete(kvKeys.keyByHash(oldHash))
        .set(kvKeys.keyByHash(next.hash), keyId);
      markChanged(op, keyId);
      return await commitChecked(op) ? { value: true } : null;
    });
  }

  /** The entry may outlive its lifetime a little (KV's `expireIn` is not to the millisecond): its own
   *  `expiresAt` decides. */
  firstSeen(updateId: number, now: number, ttlMs: number): Promise<boolean> {
    return optimistic("firstSeen", async () => {
      const e = await this.kv.get<{ expiresAt: number }>(kvKeys.botUpdate(updateId));
      if (e.value !== null && e.value.expiresAt > now) return { value: false };
      const op = this.kv.atomic().check(e).set(e.key, { expiresAt: now + ttlMs }, { expireIn: ttlMs });
      return await commitChecked(op) ? { value: true } : null;
    });
  }
}

function seed(id: string): PaymentMethod | null {
  const m = SEED_PAYMENT_METHODS.find((s) => s.id === id);
  return m ? { ...m } : null;
}

/** A write whose checks find a record that exists: `{ value: false }`; a lock lost on a shared KV file: retry. */
export async function tryCommit(op: Deno.AtomicOperation): Promise<{ value: boolean } | null> {
  try {
    return { value: (await op.commit()).ok };
  } catch (err) {
    if (isLockedError(err)) return null;
    throw err;
  }
}
