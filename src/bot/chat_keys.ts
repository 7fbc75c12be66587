/**
 * A chat's keys, the one way the bot reaches a key: every key action looks the key up among the chat's own
 * keys first (Shop.keysOfChat), so callback data naming another chat's key finds nothing.
 */
import { InlineKeyboard } from "grammy";
import type { Shop } from "../shop/mod.ts";
import type { KeyRecord } from "../store/types.ts";
import { type Callback, encodeCallback } from "./callback_data.ts";

/** The chat's keys that can still be used or topped up (a revoked key stays listed by /keys only). */
export async function usableKeys(shop: Shop, chatId: number): Promise<KeyRecord[]> {
  return (await shop.keysOfChat(chatId)).filter((k) => !k.revoked);
}

/** The chat's own usable key with this id, or null (another chat's key, a revoked or unknown one). */
export async function ownedKey(shop: Shop, chatId: number, keyId: string): Promise<KeyRecord | null> {
  return (await usableKeys(shop, chatId)).find((k) => k.id === keyId) ?? null;
}

/** One button per key, labelled by its hint. */
export function keyButtons(keys: KeyRecord[], callback: (keyId: string) => Callback): InlineKeyboard {
  const kb = new InlineKeyboard();
  for (const k of keys) kb.text(k.hint, encodeCallback(callback(k.id))).row();
  return kb;
}
