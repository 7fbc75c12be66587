/**
 * The dashboard's authentication stage (server.ts, routes with auth "session"): the session the `gw_session`
 * cookie names (src/auth/session.ts) — a key header is never looked at — and who the client is: its address
 * for the sign-in limit and whether it came over HTTPS, both as far as TRUSTED_PROXIES lets headers say
 * (client_address.ts).
 */
import type { App } from "../app.ts";
import { findSession, SESSION_COOKIE } from "../auth/session.ts";
import type { SessionContext } from "../request/context.ts";
import { readCookie } from "../util/cookies.ts";
import type { ClientAddresses } from "./client_address.ts";

export async function admitSession(
  app: App,
  addresses: ClientAddresses,
  ctx: SessionContext,
  peer: string,
): Promise<void> {
  const h = ctx.req.headers;
  ctx.client = addresses.resolve(peer, h.get("x-forwarded-for"));
  ctx.https = addresses.isHttps(ctx.url, peer, h.get("x-forwarded-proto"));
  ctx.session = await findSession(
    app.store,
    app.accounts,
    readCookie(h.get("cookie"), SESSION_COOKIE),
    app.now(),
  );
  if (ctx.session) ctx.trace.authenticated(ctx.session.account.rec.id);
}
