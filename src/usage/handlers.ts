/**
 * GET /v1/usage and GET /v1/usage/requests (spec §4.8): the calling key's own usage only. Order of
 * checks: key → read rate (429 usage_rate_limit) → query (410 mode, 422 validation_error) → cursor
 * (400 invalid_cursor). Pending settlements are flushed first, so every settled request is listed.
 */
import type { App } from "../app.ts";
import { jsonResponse } from "../request/json.ts";
import type { KeyContext } from "../request/context.ts";
import { CursorSigner } from "../reports/cursor.ts";
import { filtersKey, parseUsageQuery, type ReportKind, type UsageQuery } from "./query.ts";
import { admitRead } from "../reports/rate_limit.ts";
import { requestView, usageRequestsPage, usageSummary } from "../reports/report.ts";

/** Per running gateway: its cursor secret. */
const SIGNERS = new WeakMap<App, CursorSigner>();

function signerOf(app: App): CursorSigner {
  let s = SIGNERS.get(app);
  if (!s) SIGNERS.set(app, s = new CursorSigner());
  return s;
}

async function admit(app: App, ctx: KeyContext, kind: ReportKind) {
  const account = ctx.account;
  admitRead(app, account.rec.id);
  const query: UsageQuery = parseUsageQuery(ctx.url.searchParams, kind);
  await app.accounts.committer.flush();
  return { keyId: account.rec.id, query };
}

export async function getUsage(app: App, ctx: KeyContext): Promise<Response> {
  const { keyId, query } = await admit(app, ctx, "summary");
  return jsonResponse(200, await usageSummary(app.store, keyId, query), ctx.requestId);
}

export async function getUsageRequests(app: App, ctx: KeyContext): Promise<Response> {
  const { keyId, query } = await admit(app, ctx, "requests");
  const signer = signerOf(app);
  const filters = filtersKey(query.filters);
  const after = query.cursor === null ? null : (await signer.verify(query.cursor, keyId, filters)).after;
  const page = await usageRequestsPage(app.store, keyId, query, after);
  const next = page.after === null ? null : await signer.sign(keyId, filters, { after: page.after });
  return jsonResponse(200, {
    object: "list",
    data: page.rows.map(requestView),
    has_more: page.after !== null,
    next_cursor: next,
  }, ctx.requestId);
}
