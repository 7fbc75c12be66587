/**
 * The key shop's operator routes, behind the admin token like the rest of /admin: packages, payment
 * methods, keys by chat or hint, a key's ledger, payments (list, confirm a manual one, refund). The operations
 * and their wire format are src/shop/operations.ts, shared with the CLI.
 */
import type { App } from "../app.ts";
import { parseJsonObject, readBodyBytes, readJsonObject } from "../request/body.ts";
import type { RouteContext } from "../request/context.ts";
import { jsonResponse } from "../request/json.ts";
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
} from "../shop/operations.ts";
import { ADMIN_BODY_LIMIT } from "./api.ts";

export async function adminListPackages(app: App, ctx: RouteContext): Promise<Response> {
  return jsonResponse(200, await listPackagesOp(app.shop), ctx.requestId);
}

export async function adminCreatePackage(app: App, ctx: RouteContext): Promise<Response> {
  const body = await readJsonObject(ctx.req, ADMIN_BODY_LIMIT);
  return jsonResponse(201, await createPackageOp(app.shop, body), ctx.requestId);
}

export async function adminUpdatePackage(app: App, ctx: RouteContext): Promise<Response> {
  const body = await readJsonObject(ctx.req, ADMIN_BODY_LIMIT);
  return jsonResponse(200, await updatePackageOp(app.shop, ctx.params.id!, body), ctx.requestId);
}

export async function adminListMethods(app: App, ctx: RouteContext): Promise<Response> {
  return jsonResponse(200, await listMethodsOp(app.shop), ctx.requestId);
}

export async function adminUpdateMethod(app: App, ctx: RouteContext): Promise<Response> {
  const body = await readJsonObject(ctx.req, ADMIN_BODY_LIMIT);
  return jsonResponse(200, await updateMethodOp(app.shop, ctx.params.id!, body), ctx.requestId);
}

export async function adminFindKeys(app: App, ctx: RouteContext): Promise<Response> {
  return jsonResponse(200, await findKeysOp(app.shop, ctx.url.searchParams, app.now()), ctx.requestId);
}

export async function adminKeyLedger(app: App, ctx: RouteContext): Promise<Response> {
  return jsonResponse(200, await ledgerOp(app.shop, ctx.params.id!), ctx.requestId);
}

export async function adminListPayments(app: App, ctx: RouteContext): Promise<Response> {
  return jsonResponse(200, await listPaymentsOp(app.shop, ctx.url.searchParams), ctx.requestId);
}

/** Confirm and refund take no body: an empty one stands for {}, anything else must be an object. */
async function noBody(ctx: RouteContext): Promise<void> {
  const bytes = await readBodyBytes(ctx.req, ADMIN_BODY_LIMIT);
  if (bytes.byteLength > 0) parseJsonObject(bytes);
}

export async function adminConfirmPayment(app: App, ctx: RouteContext): Promise<Response> {
  await noBody(ctx);
  return jsonResponse(200, await confirmPaymentOp(app.shop, ctx.params.id!, app.now()), ctx.requestId);
}

export async function adminRefundPayment(app: App, ctx: RouteContext): Promise<Response> {
  await noBody(ctx);
  return jsonResponse(200, await refundPaymentOp(app.shop, ctx.params.id!, app.now()), ctx.requestId);
}
