/** What the CLI needs from either mode: the operations of the admin API. */
import type { KeyAction } from "../../src/accounts/key_operations.ts";
import type { TariffList } from "../../src/billing/tariff_rows.ts";
import type { ShopCommand } from "./shop_args.ts";

export type KeyView = Record<string, unknown>;

export interface Backend {
  /** The created key's view plus `key` (the full key, shown only once). */
  create(body: Record<string, unknown>): Promise<KeyView & { key: string }>;
  show(id: string): Promise<KeyView>;
  action(id: string, action: KeyAction, body: Record<string, unknown>): Promise<KeyView>;
  /** GET /admin/tariff */
  tariff(): Promise<TariffList>;
  /** POST /admin/tariff: `{rows}` replaces every row of the models it names; returns the new table. */
  setTariff(body: { rows: unknown[] }): Promise<TariffList>;
  /** The key shop, as the admin API answers (src/shop/operations.ts). GET /admin/packages … */
  shop(cmd: ShopCommand): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** A failed operation: the message (Russian, from the gateway's error table) goes to stderr, exit 1. */
export class OperationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OperationError";
  }
}
