/** The operator HTTP API under /admin/ (enabled only when ADMIN_TOKEN is set). */
import type { App } from "../app.ts";
import { GatewayError } from "../errors/gateway_error.ts";
import { parseJsonObject, readBodyBytes, readJsonObject } from "../request/body.ts";
import { jsonResponse } from "../request/json.ts";
import type { RouteContext } from "../request/context.ts";
import {
  applyKeyAction,
  createKey,
  KEY_ACTIONS,
  type KeyAction,
  keyView,
} from "../accounts/key_operations.ts";

export const ADMIN_BODY_LIMIT = 64 * 1024;

export async function adminCreateKey(app: App, ctx: RouteContext): Promise<Response> {
  const body = await readJsonObject(ctx.req, ADMIN_BODY_LIMIT);
  return jsonResponse(201, await createKey(app.accounts, body, app.now()), ctx.requestId);
}

export async function adminGetKey(app: App, ctx: RouteContext): Promise<Response> {
  const acc = await app.accounts.find(ctx.params.id!);
  if (!acc) throw new GatewayError("key_not_found");
  return jsonResponse(200, await keyView(app.accounts, acc, app.now()), ctx.requestId);
}

export async function adminKeyAction(app: App, ctx: RouteContext): Promise<Response> {
  const action = ctx.params.action as KeyAction;
  if (!KEY_ACTIONS.includes(action)) throw new GatewayError("route_not_found");
  // Actions like revoke take no body: an empty one stands for {}.
  const bytes = await readBodyBytes(ctx.req, ADMIN_BODY_LIMIT);
  const body = bytes.byteLength === 0 ? {} : parseJsonObject(bytes);
  return jsonResponse(
    200,
    await applyKeyAction(app.accounts, ctx.params.id!, action, body, app.now()),
    ctx.requestId,
  );
}

/** GET /admin/ledger: the group commit's health — commits, failures and the settlement → durable lag. */
export function adminLedger(app: App, ctx: RouteContext): Response {
  const s = app.accounts.committer.stats();
  return jsonResponse(200, {
    commits: s.commits,
    failures: s.failures,
    commit_lag_ms: { last: Math.round(s.lastLagMs * 100) / 100, max: Math.round(s.maxLagMs * 100) / 100 },
  }, ctx.requestId);
}
