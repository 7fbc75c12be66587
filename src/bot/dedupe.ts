/**
 * Each update once: Telegram sends an update again when its webhook call failed or timed out, so
 * the first middleware records its update_id in the store (Shop.firstSeen, shared by every process) and
 * drops one seen before.
 */
import type { Context, NextFunction } from "grammy";
import type { Shop } from "../shop/mod.ts";

/** The update_id could not be recorded (the store is unreachable): nothing was done, Telegram should retry. */
export class UpdateNotRecorded extends Error {
  constructor(cause: unknown) {
    super("update not recorded", { cause });
    this.name = "UpdateNotRecorded";
  }
}

export function onceEach(shop: Shop, now: () => number) {
  return async (ctx: Context, next: NextFunction): Promise<void> => {
    let first: boolean;
    try {
      first = await shop.firstSeen(ctx.update.update_id, now());
    } catch (err) {
      throw new UpdateNotRecorded(err);
    }
    if (first) await next();
  };
}
