/**
 * Direct mode: opens the configured store itself and runs the shared operations. The embedded KV file under
 * DATA_DIR is refused while a gateway runs on it (the gateway keeps balances in memory and is its single
 * writer); a shared store (Postgres, kv:) is used beside the gateways, like one more of them.
 */
import type { Accounts } from "../../src/accounts/accounts.ts";
import { openAccounts } from "../../src/accounts/open_accounts.ts";
import { applyKeyAction, createKey, keyView } from "../../src/accounts/key_operations.ts";
import { applyTariffChange, reconcileTariff, tariffList } from "../../src/billing/tariff_rows.ts";
import type { Config } from "../../src/config/env.ts";
import { errorSpec } from "../../src/errors/codes.ts";
import { GatewayError } from "../../src/errors/gateway_error.ts";
import { Shop } from "../../src/shop/mod.ts";
import {
  confirmPaymentOp,
  createPackageOp,
  findKeysOp,
  ledgerOp,
  listMethodsOp,
  listPackagesOp,
  listPaymentsOp,
  refundPaymentOp,
  updateMethodOp,
  updatePackageOp,
} from "../../src/shop/operations.ts";
import { openStore } from "../../src/store/open.ts";
import { Logger } from "../../src/util/log.ts";
import { type Backend, OperationError } from "./backend.ts";
import type { ShopCommand } from "./shop_args.ts";

/** The Russian message of the error table, with the detail and the offending field. */
export function describeGatewayError(err: GatewayError): string {
  const spec = errorSpec(err.code);
  const detail = err.detail ? ` ${err.detail}` : "";
  const param = err.param ? ` (param: ${err.param})` : "";
  return `${spec.message}${detail}${param} [${err.code}]\n${spec.action}`;
}

async function guard<T>(op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (err) {
    if (err instanceof GatewayError) throw new OperationError(describeGatewayError(err));
    throw err;
  }
}

export async function directBackend(config: Config): Promise<Backend> {
  // Stdout carries the command's answer: the store's and the ledger's log lines go to stderr.
  const log = new Logger("warn", (line) => console.error(line));
  const store = await openStore(config, log);
  let accounts: Accounts;
  try {
    accounts = await openAccounts(config, store, log);
  } catch (err) {
    await store.close();
    throw err;
  }
  const shop = new Shop(store, accounts);
  return {
    create: (body) => guard(() => createKey(accounts, body, Date.now())),
    show: (id) =>
      guard(async () => {
        const acc = await accounts.find(id);
        if (!acc) throw new GatewayError("key_not_found");
        return await keyView(accounts, acc, Date.now());
      }),
    action: (id, action, body) => guard(() => applyKeyAction(accounts, id, action, body, Date.now())),
    tariff: () => guard(async () => tariffList(reconcileTariff(await store.getTariff()).rows)),
    shop: (cmd) => guard(() => shopOp(shop, cmd, Date.now())),
    setTariff: (body) =>
      guard(async () => {
        const rows = applyTariffChange(reconcileTariff(await store.getTariff()).rows, body);
        await store.putTariff(rows);
        return tariffList(rows);
      }),
    async close() {
      try {
        await accounts.close();
      } finally {
        await store.close();
      }
      // The group committer logs and requeues a failed write instead of throwing; here nothing will retry.
      if (accounts.committer.failures > 0) {
        throw new OperationError(
          "Изменение не удалось записать в хранилище; проверьте DATA_DIR и повторите.",
        );
      }
    },
  };
}

/** A key shop command on the shop's operations, as the admin API runs them (src/admin/shop_api.ts). */
function shopOp(shop: Shop, cmd: ShopCommand, now: number): Promise<Record<string, unknown>> {
  switch (cmd.kind) {
    case "package-list":
      return listPackagesOp(shop);
    case "package-create":
      return createPackageOp(shop, cmd.body);
    case "package-set":
      return updatePackageOp(shop, cmd.id, cmd.body);
    case "method-list":
      return listMethodsOp(shop);
    case "method-set":
      return updateMethodOp(shop, cmd.id, cmd.body);
    case "key-find":
      return findKeysOp(shop, new URLSearchParams(cmd.query), now);
    case "key-ledger":
      return ledgerOp(shop, cmd.id);
    case "payment-list":
      return listPaymentsOp(shop, new URLSearchParams(cmd.query));
    case "payment-confirm":
      return confirmPaymentOp(shop, cmd.id, now);
    case "payment-refund":
      return refundPaymentOp(shop, cmd.id, now);
  }
}
